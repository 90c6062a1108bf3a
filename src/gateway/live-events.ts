// The live event hub: writes hand it their committed events, open subscriptions read them, and with
// REDIS_URL it relays them between instances. Delivery is at most once by design (docs/subscriptions.md):
// publishing never waits on Redis nor on the streams, whose hand-over is spread over later turns of the
// event loop. A lost channel subscription ends every stream; its client resumes with Last-Event-ID from
// the stored events.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { z } from 'zod';
import { apiError } from '../errors.ts';
import { parsedJson } from '../lib/json.ts';
import type { RedisConnections } from '../redis/client.ts';
import { RECORD_EVENT_TYPES, type RecordEvent, type RecordEventPublisher, type RecordEventSource } from '../domain/record-events.ts';

/** After the deployment's prefix, which ioredis does not add to channels. */
const RECORD_EVENTS_CHANNEL = 'record-events';

/** Per stream, for a reader slower than the events; the oldest go first. */
const STREAM_BUFFER = 256;

export const HANDOVERS_PER_TURN = 64;

/** Events not yet handed to every stream; past this the oldest is dropped (at most once). */
const PENDING_EVENTS = 1_024;

export interface LiveEventHub extends RecordEventPublisher, RecordEventSource {
  /** Resolves once other instances' events reach this one (at once without Redis). */
  ready(): Promise<void>;
  /** The shutdown's first step: ends every open stream and refuses new ones. */
  close(): void;
  openStreams(): number;
  keyChanged(apiKeyId: number): void;
}

/** `origin`: the publishing instance, which delivered the event itself. */
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

class EventStream implements AsyncIterableIterator<RecordEvent> {
  private readonly queued: RecordEvent[] = [];
  private waiting: ((result: IteratorResult<RecordEvent>) => void) | null = null;
  private ended = false;

  constructor(
    readonly apiKeyId: number,
    private readonly onEnd: () => void,
    private readonly onKeyChange: (() => void) | null,
  ) {}

  keyChanged(): void {
    if (!this.ended) this.onKeyChange?.();
  }

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

interface LiveEventHubOptions {
  perKeyLimit: number;
  instanceLimit?: number;
  logger: Logger;
  redis?: RedisConnections | null;
  /** Absent, a stream sees a changed key only at its next event or heartbeat. */
  keyChanges?: { onChange(listener: (apiKeyId: number) => void): () => void } | null;
}

export function createLiveEventHub(options: LiveEventHubOptions): LiveEventHub {
  const { perKeyLimit, instanceLimit = Number.POSITIVE_INFINITY, logger, redis = null, keyChanges = null } = options;
  const streams = new Set<EventStream>();
  const openByKey = new Map<number, number>();
  let closed = false;

  // The event being handed over goes to the streams open when its hand-over began.
  const pending: RecordEvent[] = [];
  let current: { event: RecordEvent; targets: EventStream[]; handedTo: number } | null = null;
  let scheduled: ReturnType<typeof setImmediate> | null = null;

  const handOver = (): void => {
    scheduled = null;
    let budget = HANDOVERS_PER_TURN;
    while (budget > 0) {
      if (!current) {
        const event = pending.shift();
        if (!event) return;
        current = { event, targets: [...streams], handedTo: 0 };
      }
      const end = Math.min(current.targets.length, current.handedTo + budget);
      for (let index = current.handedTo; index < end; index += 1) current.targets[index]?.push(current.event);
      budget -= end - current.handedTo;
      current.handedTo = end;
      if (current.handedTo >= current.targets.length) current = null;
    }
    if (current || pending.length > 0) scheduled = setImmediate(handOver);
  };

  const deliver = (event: RecordEvent): void => {
    if (closed || streams.size === 0) return;
    pending.push(event);
    const dropped = pending.length > PENDING_EVENTS ? pending.shift() : undefined;
    if (dropped)
      logger.debug({ event_id: dropped.id }, 'live events came faster than they could be handed over: the oldest waiting one was dropped');
    scheduled ??= setImmediate(handOver);
  };

  const origin = randomUUID();
  const channel = redis ? `${redis.prefix}${RECORD_EVENTS_CHANNEL}` : null;
  let subscribed: Promise<void> = Promise.resolve();
  if (redis && channel) {
    redis.subscriber.on('message', (from: string, message: string) => {
      if (from !== channel) return;
      const parsed = wireMessage.safeParse(parsedJson(message)).data;
      if (!parsed) {
        logger.warn({ channel }, 'ignored a message on the record events channel that is not a record event');
        return;
      }
      if (parsed.origin !== origin) deliver(parsed.event);
    });
    // ioredis subscribes again after a reconnection, but what was published meanwhile is lost here.
    let subscriptionLost = false;
    redis.subscriber.on('close', () => {
      subscriptionLost = true;
    });
    redis.subscriber.on('ready', () => {
      if (!subscriptionLost || closed) return;
      subscriptionLost = false;
      if (streams.size > 0)
        logger.info({ streams: streams.size }, 'Redis is back: open streams ended, for their clients to resume what they missed');
      for (const stream of [...streams]) stream.end();
    });
    subscribed = redis.subscriber.subscribe(channel).then(
      () => undefined,
      (error: unknown) => logger.warn({ err: { message: (error as Error).message } }, 'could not subscribe to record events'),
    );
  }

  function keyChanged(apiKeyId: number): void {
    if (!openByKey.has(apiKeyId)) return;
    for (const stream of [...streams]) if (stream.apiKeyId === apiKeyId) stream.keyChanged();
  }
  const stopHearingKeyChanges = keyChanges?.onChange(keyChanged) ?? (() => undefined);

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
    open(apiKeyId, onKeyChange) {
      if (closed) {
        const message = 'This instance is shutting down: open the subscription again (another instance answers it).';
        throw apiError('UNAVAILABLE', 'unavailable', message);
      }
      const open = openByKey.get(apiKeyId) ?? 0;
      if (open >= perKeyLimit) {
        const message = `This API key already holds ${perKeyLimit} open subscriptions on this instance, its limit: close one before opening another.`;
        throw apiError('RATE_LIMITED', 'too_many_subscriptions', message, { limit: perKeyLimit });
      }
      if (streams.size >= instanceLimit) {
        const message = `This instance already holds ${instanceLimit} open subscriptions, its limit: open the subscription again in a moment (another instance may answer it).`;
        throw apiError('UNAVAILABLE', 'subscriptions_at_capacity', message, { limit: instanceLimit });
      }
      openByKey.set(apiKeyId, open + 1);
      const stream = new EventStream(
        apiKeyId,
        () => {
          streams.delete(stream);
          const left = (openByKey.get(apiKeyId) ?? 1) - 1;
          if (left > 0) openByKey.set(apiKeyId, left);
          else openByKey.delete(apiKeyId);
        },
        onKeyChange ?? null,
      );
      streams.add(stream);
      return stream;
    },
    ready: () => subscribed,
    close() {
      closed = true;
      stopHearingKeyChanges();
      if (scheduled) clearImmediate(scheduled);
      scheduled = null;
      pending.length = 0;
      current = null;
      for (const stream of [...streams]) stream.end();
    },
    openStreams: () => streams.size,
    keyChanged,
  };
}
