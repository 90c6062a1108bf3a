// A plain reader of a GraphQL-over-SSE answer for tests: each message as it arrives (a comment
// line, which is a heartbeat, or an event with its data and SSE id), with a time limit on each wait.

export type SseMessage =
  | { kind: 'heartbeat' }
  | { kind: 'next'; data: { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] }; id?: string }
  | { kind: 'complete' };

export interface SseReader {
  response: Response;
  /** The next message; fails after `timeoutMs` (a message that never comes). */
  next(timeoutMs?: number): Promise<SseMessage>;
  /** The next `next` event, skipping heartbeats. */
  nextEvent(timeoutMs?: number): Promise<Extract<SseMessage, { kind: 'next' }>['data']>;
  /** The SSE id of the last `next` event taken (what a client sends back as Last-Event-ID), if it had one. */
  lastEventId(): string | undefined;
  /** Waits `ms` and returns every event (heartbeats left out) that came meanwhile. */
  eventsWithin(ms: number): Promise<Extract<SseMessage, { kind: 'next' }>['data'][]>;
  close(): Promise<void>;
}

function parseBlock(block: string): SseMessage | null {
  const lines = block.split('\n');
  if (lines.every((line) => line.startsWith(':'))) return { kind: 'heartbeat' };
  const event = lines
    .find((line) => line.startsWith('event:'))
    ?.slice(6)
    .trim();
  const data = lines
    .filter((line) => line.startsWith('data:'))
    .map((line) => line.slice(5).trimStart())
    .join('\n');
  const id = lines
    .find((line) => line.startsWith('id:'))
    ?.slice(3)
    .trim();
  if (event === 'next') return id === undefined ? { kind: 'next', data: JSON.parse(data) } : { kind: 'next', data: JSON.parse(data), id };
  if (event === 'complete') return { kind: 'complete' };
  return null;
}

export function readSse(response: Response): SseReader {
  if (!response.body) throw new Error(`no body (status ${response.status})`);
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const ready: SseMessage[] = [];
  let pending: Promise<void> | null = null;
  let lastEventId: string | undefined;

  const fill = (): Promise<void> => {
    pending ??= reader.read().then(({ done, value }) => {
      pending = null;
      if (done) {
        ready.push({ kind: 'complete' });
        return;
      }
      buffered += decoder.decode(value, { stream: true });
      let end = buffered.indexOf('\n\n');
      while (end !== -1) {
        const message = parseBlock(buffered.slice(0, end));
        buffered = buffered.slice(end + 2);
        if (message) ready.push(message);
        end = buffered.indexOf('\n\n');
      }
    });
    return pending;
  };

  const next = async (timeoutMs = 5_000): Promise<SseMessage> => {
    const deadline = Date.now() + timeoutMs;
    while (ready.length === 0) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no SSE message within ${timeoutMs} ms`);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), left)));
      const outcome = await Promise.race([fill(), timedOut]);
      clearTimeout(timer);
      if (outcome === 'timeout' && ready.length === 0) throw new Error(`no SSE message within ${timeoutMs} ms`);
    }
    const message = ready.shift() as SseMessage;
    if (message.kind === 'next') lastEventId = message.id;
    return message;
  };

  return {
    response,
    next,
    lastEventId: () => lastEventId,
    async nextEvent(timeoutMs = 5_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const message = await next(Math.max(1, deadline - Date.now()));
        if (message.kind === 'next') return message.data;
        if (message.kind === 'complete') throw new Error('the stream completed');
      }
    },
    async eventsWithin(ms) {
      const events: Extract<SseMessage, { kind: 'next' }>['data'][] = [];
      const deadline = Date.now() + ms;
      for (;;) {
        const left = deadline - Date.now();
        if (left <= 0) return events;
        const message = await next(left).catch(() => null);
        if (message?.kind === 'next') events.push(message.data);
        if (message?.kind === 'complete') return events;
      }
    },
    async close() {
      await reader.cancel().catch(() => undefined);
    },
  };
}
