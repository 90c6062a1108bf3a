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

/** Trusted documents' uses, added up and written at most once a minute (src/gateway/trusted-documents.ts). */
export interface DocumentUseLog {
  note(releaseId: number, hash: string, at: Date): void;
  flush(): Promise<void>;
}

export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The time; tests move it to check expiries. */
  now: () => Date;
  keys: KeyVerifier;
  readCache: ReadCacheOptions | null;
  files: FileStorage;
  geocoder: Geocoder;
  rateCounters: CounterStore;
  // Absent: calls go uncounted, the app never drains, makes its own metrics, and has no live events.
  keyCalls?: KeyCallLog;
  documentUses?: DocumentUseLog;
  lifecycle?: Lifecycle;
  metrics?: GatewayMetrics;
  events?: RecordEventPublisher;
  liveEvents?: RecordEventSource;
}

const noLiveEvents: RecordEventSource = {
  open: () => (async function* () {})(),
};

export async function createContext(deps: AppDeps, request: Request): Promise<Context> {
  const actor = await actorFromRequest(deps.keys, request);
  let requestLog: Logger | undefined;
  // Made on first use: most requests write no line of their own, and a child logger is not free.
  const logger = (): Logger => {
    requestLog ??= requestLogger(deps.logger, sentRequest(request));
    return requestLog;
  };
  return contextFor(deps, actor, request, logger, () => verifyPresentedKey(deps.keys, request));
}

type ContextDeps = Pick<AppDeps, 'config' | 'db' | 'now' | 'files' | 'geocoder' | 'events' | 'liveEvents'>;

/** The one way a context is made; without `actorNow` (the service acting as a key) the key stands as given. */
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
  // Not enumerable: Yoga copies the context with Object.assign, which would make the logger every request.
  return Object.defineProperty(context, 'logger', { get: logger, enumerable: false, configurable: true }) as Context;
}

/** Puts `context`'s lazy logger getter on Yoga's copy of it, which Object.assign would not carry. */
export function lendLogger(target: object, context: Context): Context {
  Object.defineProperty(target, 'logger', Object.getOwnPropertyDescriptor(context, 'logger') as PropertyDescriptor);
  return context;
}
