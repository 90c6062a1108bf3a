// The live event hub: where writes hand their committed events (src/domain/record-events.ts) and
// where open GraphQL subscriptions (src/schema/subscriptions.ts) read them. Without Redis it fans an
// event out to this instance's streams; with REDIS_URL it also publishes it on the deployment's
// channel, and every other instance hands what it hears there to its own streams.
//
// Live delivery is at most once by design (docs/subscriptions.md): publishing never waits. A Redis
// that is down or frozen costs the other instances' subscribers those events, never a request its
// time: the command connection gives up after REDIS_COMMAND_TIMEOUT_MS, fails at once while its
// breaker is open (src/redis/client.ts), and nobody awaits it. A reader slower than the events keeps
// at most STREAM_BUFFER of them; older ones are dropped.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { apiError } from '../errors.ts';
import type { RedisConnections } from '../redis/client.ts';
import { RECORD_EVENT_TYPES, type RecordEvent, type RecordEventPublisher, type RecordEventSource } from '../domain/record-events.ts';

/** The channel of record events, after the deployment's prefix (ioredis does not prefix channels). */
const RECORD_EVENTS_CHANNEL = 'record-events';

/** Events one stream keeps for a reader that has not taken them yet; the oldest go first. */
const STREAM_BUFFER = 256;

/** The live events of one instance: a publisher for writes, a source for subscriptions. */
export interface LiveEventHub extends RecordEventPublisher, RecordEventSource {
  /** Resolves once events published by other instances reach this one (at once without Redis). */
  ready(): Promise<void>;
  /** Ends every open stream (each subscription completes, so its response ends) and refuses new ones: the shutdown's first step. */
  close(): void;
  /** Streams open on this instance now. */
  openStreams(): number;
}

/** What travels on the channel: the event, and the instance that published it (which delivered it itself). */
const wireMessage = z.object({
  origin: z.string(),
  event: z.object({
    id: z.string().max(200),
    type: z.enum(RECORD_EVENT_TYPES),
    dealershipId: z.number().int(),
    subject: z.enum(['lead', 'lead_event', 'car', 'phone_call']),
    recordId: z.number().int(),
    occurredAt: z.string().transform((text) => new Date(text)),
  }),
});

/** The refusal of one stream more than a key may hold open (429, like the other limits). */
function tooManySubscriptions(limit: number) {
  return apiError(
    'RATE_LIMITED',
    'too_many_subscriptions',
    `This API key already holds ${limit} open subscriptions on this instance, its limit: close one before opening another.`,
    { limit },
  );
}

const shuttingDown = () =>
  apiError('UNAVAILABLE', 'unavailable', 'This instance is shutting down: open the subscription again (another instance answers it).');

/** One open stream: the events handed to it, waiting for its reader. */
class EventStream implements AsyncIterableIterator<RecordEvent> {
  private readonly queued: RecordEvent[] = [];
  private waiting: ((result: IteratorResult<RecordEvent>) => void) | null = null;
  private ended = false;

  constructor(private readonly onEnd: () => void) {}

  push(event: RecordEvent): void {
    if (this.ended) return;
    if (this.waiting) {
      const waiting = this.waiting;
      this.waiting = null;
      waiting({ value: event, done: false });
      return;
    }
    this.queued.push(event);
    if (this.queued.length > STREAM_BUFFER) this.queued.shift();
  }

  next(): Promise<IteratorResult<RecordEvent>> {
    const event = this.queued.shift();
    if (event) return Promise.resolve({ value: event, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  return(): Promise<IteratorResult<RecordEvent>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  /** Ends the stream: its reader is told it is done, and its key's count is released once. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queued.length = 0;
    this.onEnd();
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

/**
 * `perKeyLimit`: SUBSCRIPTIONS_PER_KEY, counted on this instance; `redis`: the deployment's
 * connections when REDIS_URL is set, for the events of the other instances.
 */
export function createLiveEventHub(options: { perKeyLimit: number; logger: Logger; redis?: RedisConnections | null }): LiveEventHub {
  const { perKeyLimit, logger, redis = null } = options;
  const streams = new Set<EventStream>();
  const openByKey = new Map<number, number>();
  let closed = false;

  const deliver = (event: RecordEvent): void => {
    for (const stream of streams) stream.push(event);
  };

  const origin = randomUUID();
  const channel = redis ? `${redis.prefix}${RECORD_EVENTS_CHANNEL}` : null;
  let subscribed: Promise<void> = Promise.resolve();
  if (redis && channel) {
    redis.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      let parsed: z.infer<typeof wireMessage> | null = null;
      try {
        const result = wireMessage.safeParse(JSON.parse(message));
        parsed = result.success ? result.data : null;
      } catch {
        parsed = null;
      }
      if (!parsed) {
        logger.warn({ channel }, 'ignored a message on the record events channel that is not a record event');
        return;
      }
      if (parsed.origin !== origin) deliver(parsed.event);
    });
    // ioredis subscribes again after a reconnection; events published meanwhile are not heard (at most once).
    subscribed = redis.subscriber.subscribe(channel).then(
      () => undefined,
      (error: unknown) => logger.warn({ err: { message: (error as Error).message } }, 'could not subscribe to record events'),
    );
  }

  return {
    publish(event) {
      deliver(event);
      if (!redis || !channel) return;
      // Not awaited: the write that published it has committed and its answer does not wait for Redis.
      redis.client.publish(channel, JSON.stringify({ origin, event })).catch((error: unknown) => {
        logger.debug(
          { err: { message: (error as Error).message }, event_id: event.id },
          "a record event did not reach Redis: other instances' subscribers miss it",
        );
      });
    },
    open(apiKeyId) {
      if (closed) throw shuttingDown();
      const open = openByKey.get(apiKeyId) ?? 0;
      if (open >= perKeyLimit) throw tooManySubscriptions(perKeyLimit);
      openByKey.set(apiKeyId, open + 1);
      const stream = new EventStream(() => {
        streams.delete(stream);
        const left = (openByKey.get(apiKeyId) ?? 1) - 1;
        if (left > 0) openByKey.set(apiKeyId, left);
        else openByKey.delete(apiKeyId);
      });
      streams.add(stream);
      return stream;
    },
    ready: () => subscribed,
    close() {
      closed = true;
      for (const stream of [...streams]) stream.end();
    },
    openStreams: () => streams.size,
  };
}
