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
//
// Publishing costs the writer the same whatever the number of open streams: the event is queued and
// the hub hands it to its streams in later turns of the event loop, at most HANDOVERS_PER_TURN
// streams a turn, so a write's answer never waits for the subscribers' work (each re-verifies its key
// and re-reads the record) and that work is spread over turns that the other requests share.
//
// Open streams are counted per key (SUBSCRIPTIONS_PER_KEY) and for the whole instance
// (SUBSCRIPTIONS_PER_INSTANCE), each released once its stream ends. A change of a key announced to
// this instance (src/auth/key-cache.ts) is passed to that key's streams at once, so that they check
// the key again without waiting for a heartbeat.
//
// A subscription to the channel lost and made again (Redis restarted, or the connection dropped) ends
// every open stream, whose clients resume with Last-Event-ID: the events published while it was
// lost reach them from the database, where every event is stored with its change.
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

/** Streams handed an event in one turn of the event loop; the rest wait for the next turns. */
export const HANDOVERS_PER_TURN = 64;

/** Events published and not yet handed to every stream; past this the oldest is dropped (at most once). */
const PENDING_EVENTS = 1_024;

/** The live events of one instance: a publisher for writes, a source for subscriptions. */
export interface LiveEventHub extends RecordEventPublisher, RecordEventSource {
  /** Resolves once events published by other instances reach this one (at once without Redis). */
  ready(): Promise<void>;
  /** Ends every open stream (each subscription completes, so its response ends) and refuses new ones: the shutdown's first step. */
  close(): void;
  /** Streams open on this instance now. */
  openStreams(): number;
  /** A key changed (revoked, or its permissions or dealerships): its open streams are told at once, to check it again. */
  keyChanged(apiKeyId: number): void;
}

/** Where the hub hears of changed keys: the key verifier (src/auth/key-cache.ts), after it forgot their verdicts. */
interface KeyChangeNotices {
  onChange(listener: (apiKeyId: number) => void): () => void;
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

/** The refusal of one stream more than the instance holds open, all keys together. */
function atCapacity(limit: number) {
  return apiError(
    'UNAVAILABLE',
    'subscriptions_at_capacity',
    `This instance already holds ${limit} open subscriptions, its limit: open the subscription again in a moment (another instance may answer it).`,
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

  constructor(
    readonly apiKeyId: number,
    private readonly onEnd: () => void,
    private readonly onKeyChange: (() => void) | null,
  ) {}

  /** The stream's key changed: its reader checks the key again now. */
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

interface LiveEventHubOptions {
  /** SUBSCRIPTIONS_PER_KEY, counted on this instance. */
  perKeyLimit: number;
  /** SUBSCRIPTIONS_PER_INSTANCE: every key's streams together; absent, only the per-key limit counts. */
  instanceLimit?: number;
  logger: Logger;
  /** The deployment's connections when REDIS_URL is set, for the events of the other instances. */
  redis?: RedisConnections | null;
  /** Where changed keys are announced; absent, a stream sees a change at its next event or heartbeat. */
  keyChanges?: KeyChangeNotices | null;
}

export function createLiveEventHub(options: LiveEventHubOptions): LiveEventHub {
  const { perKeyLimit, instanceLimit = Number.POSITIVE_INFINITY, logger, redis = null, keyChanges = null } = options;
  const streams = new Set<EventStream>();
  const openByKey = new Map<number, number>();
  let closed = false;

  // The events waiting to be handed over, and the one being handed over: to the streams open when
  // its hand-over began, from `handedTo` on.
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

  /** Queues the event for this instance's streams: nothing is handed over in the caller's turn. */
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
    // ioredis subscribes again after a reconnection, but what was published meanwhile never reaches
    // this instance: every open stream then ends (`complete`), so that its client reconnects with
    // Last-Event-ID and is sent the stored events it missed (src/schema/subscriptions.ts).
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
      if (closed) throw shuttingDown();
      const open = openByKey.get(apiKeyId) ?? 0;
      if (open >= perKeyLimit) throw tooManySubscriptions(perKeyLimit);
      if (streams.size >= instanceLimit) throw atCapacity(instanceLimit);
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
