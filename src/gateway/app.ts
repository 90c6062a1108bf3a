// The service's long-lived dependencies, and the context each request's resolvers get from them.
import type { Logger } from 'pino';
import type { Config } from '../config/index.ts';
import type { Db } from '../db/client.ts';
import type { KeyVerifier } from '../auth/key-cache.ts';
import type { Actor } from '../auth/api-keys.ts';
import type { ReadCacheOptions } from './response-cache.ts';
import { forActor } from '../db/scoped.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { FileStorage } from '../storage/file-storage.ts';
import type { Geocoder } from '../domain/geocoding.ts';
import type { CounterStore } from '../rate-limit/counters.ts';
import type { KeyCallLog } from '../domain/api-key-calls.ts';
import type { GatewayMetrics } from '../telemetry/metrics.ts';
import { unheardEvents, type RecordEventPublisher, type RecordEventSource } from '../domain/record-events.ts';
import { requestLogger } from '../telemetry/request-record.ts';
import { actorFromRequest, sentRequest, verifyPresentedKey, type Context } from '../context.ts';

/** The long-lived things a request's context is made from. */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The time; tests move it to check expiries. */
  now: () => Date;
  /** Verifies API keys, remembering verdicts briefly (src/auth/key-cache.ts). */
  keys: KeyVerifier;
  /** The response cache's store and generation; null: reads are never cached (src/gateway/response-cache.ts). */
  readCache: ReadCacheOptions | null;
  /** Where lead attachments' bytes are kept, the same store for every instance (src/storage/file-storage.ts). */
  files: FileStorage;
  /** Places postcodes for the dealership search (src/domain/geocoding.ts): the bundled data set, or a stub in tests. */
  geocoder: Geocoder;
  /** Where the rate limits count (src/rate-limit/counters.ts): this instance's memory, or Redis. */
  rateCounters: CounterStore;
  /** Counts each call made with a valid key for `keys audit` (src/gateway/key-call-log.ts); absent, calls are not counted. */
  keyCalls?: KeyCallLog;
  /** Set when the app runs behind the process's HTTP server; absent, the app is never draining. */
  lifecycle?: Lifecycle;
  /** This instance's metrics (src/telemetry/metrics.ts); absent, the app makes its own. */
  metrics?: GatewayMetrics;
  /** Where writes hand their committed changes for live subscribers; absent, nobody listens (src/domain/record-events.ts). */
  events?: RecordEventPublisher;
  /**
   * Where subscriptions read live events (src/gateway/live-events.ts: the service gives the same hub
   * as `events`); absent, every subscription completes at once.
   */
  liveEvents?: RecordEventSource;
}

/** The source of an app that has no live events: each subscription ends as soon as it opens. */
const noLiveEvents: RecordEventSource = {
  open: () => (async function* () {})(),
};

export async function createContext(deps: AppDeps, request: Request): Promise<Context> {
  const actor = await actorFromRequest(deps.keys, request);
  let requestLog: Logger | undefined;
  // Made on first use: most requests write no line of their own, and a child logger costs the
  // serialisation of its bindings.
  return contextFor(
    deps,
    actor,
    request,
    () => {
      requestLog ??= requestLogger(deps.logger, sentRequest(request));
      return requestLog;
    },
    () => verifyPresentedKey(deps.keys, request),
  );
}

/** What a context is made of, for a request or for an operation the service runs as a key (webhook payloads). */
type ContextDeps = Pick<AppDeps, 'config' | 'db' | 'now' | 'files' | 'geocoder' | 'events' | 'liveEvents'>;

/**
 * The one way a context is made: `actor`'s scoped client and the services operations use. `actorNow`
 * verifies the key again; without it (an operation the service runs as a key), the key stands as given.
 */
export function contextFor(
  deps: ContextDeps,
  actor: Actor | null,
  request: Request,
  logger: () => Logger,
  actorNow: () => Promise<Actor | null> = () => Promise.resolve(actor),
): Context {
  const { config, now, files, geocoder } = deps;
  const context: Omit<Context, 'logger'> = {
    config,
    now,
    files,
    geocoder,
    db: forActor(deps.db, actor),
    unscopedDb: deps.db,
    request,
    actor,
    actorNow,
    // `this`: Yoga hands the resolvers a copy of the context this returns, and that copy must change.
    actAs(this: Context, current: Actor) {
      this.actor = current;
      this.db = forActor(deps.db, current);
    },
    events: deps.events ?? unheardEvents,
    liveEvents: deps.liveEvents ?? noLiveEvents,
    answering: { eventId: undefined },
  };
  // Not enumerable: Yoga copies the context it is given with Object.assign, which would call the getter
  // and make the logger for every request. Yoga's copy gets the getter itself (lendLogger).
  return Object.defineProperty(context, 'logger', { get: logger, enumerable: false, configurable: true }) as Context;
}

/**
 * Puts `context`'s logger getter on `target` (Yoga's context object, into which Yoga copies the
 * enumerable rest), so the request's logger is still made on first use; answers `context`.
 */
export function lendLogger(target: object, context: Context): Context {
  Object.defineProperty(target, 'logger', Object.getOwnPropertyDescriptor(context, 'logger') as PropertyDescriptor);
  return context;
}
