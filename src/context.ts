// What every resolver receives: the database, the clock and the caller, built once per request
// for both doors (Sofa runs Yoga's context factory for REST calls too).
import type { Logger } from 'pino';
import type { Config } from './config/index.ts';
import type { Db } from './db/client.ts';
import type { Actor } from './auth/api-keys.ts';
import type { KeyVerifier } from './auth/key-cache.ts';
import type { ReadCacheOptions } from './response-cache.ts';
import { forActor, type ScopedDb } from './db/scoped.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { FileStorage } from './storage/file-storage.ts';
import type { Geocoder } from './domain/geocoding.ts';
import type { CounterStore } from './rate-limit/counters.ts';
import type { KeyCallLog } from './domain/api-key-calls.ts';
import type { GatewayMetrics } from './telemetry/metrics.ts';
import { requestLogger } from './telemetry/request-record.ts';

/** The long-lived things a request's context is made from. */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The time; tests move it to check expiries. */
  now: () => Date;
  /** Verifies API keys, remembering verdicts briefly (src/auth/key-cache.ts). */
  keys: KeyVerifier;
  /** The response cache's store and generation; null: reads are never cached (src/response-cache.ts). */
  readCache: ReadCacheOptions | null;
  /** Where lead attachments' bytes are kept, the same store for every instance (src/storage/file-storage.ts). */
  files: FileStorage;
  /** Places postcodes for the dealership search (src/domain/geocoding.ts): the bundled data set, or a stub in tests. */
  geocoder: Geocoder;
  /** Where the rate limits count (src/rate-limit/counters.ts): this instance's memory, or Redis. */
  rateCounters: CounterStore;
  /** Counts each call made with a valid key for `keys audit` (src/key-call-log.ts); absent, calls are not counted. */
  keyCalls?: KeyCallLog;
  /** Set when the app runs behind the process's HTTP server; absent, the app is never draining. */
  lifecycle?: Lifecycle;
  /** This instance's metrics (src/telemetry/metrics.ts); absent, the app makes its own. */
  metrics?: GatewayMetrics;
}

/**
 * What a resolver is given: the caller, its scoped client and the few services operations use, not
 * the service's whole dependency bag (key verifier, caches, counters and metrics stay with the
 * plugins that own them, src/service.ts).
 */
export interface Context extends Pick<AppDeps, 'config' | 'now' | 'files' | 'geocoder'> {
  /**
   * The caller's client: every read and write is kept to the key's dealerships (src/db/scoped.ts),
   * and a request without a key reaches no dealership's rows at all.
   */
  db: ScopedDb;
  /**
   * The escape hatch, for the few reads that are deliberately global (the public redirect, the
   * partner sign-on landing, the website lookup that tells 403 from 404, phone calls' per-key dedupe
   * records). Never for data a key reads or writes as its own.
   */
  unscopedDb: Db;
  request: Request;
  /** The request's logger: every line written through it carries the request id. */
  logger: Logger;
  /** null when no key, or no valid key, was presented. */
  actor: Actor | null;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key is verified once per request even when the REST layer looks at it before the context is built. */
const actorByRequest = new WeakMap<Request, Promise<Actor | null>>();

/** The request as the client sent it, for each request the REST layer rebuilt from it. */
const sentAs = new WeakMap<Request, Request>();

/** For each request as the client sent it: the verdict on the key it presented, when it presented one. */
const presentedKeyVerdicts = new WeakMap<Request, Promise<Actor | null>>();

export function actorFromRequest(deps: AppDeps, request: Request): Promise<Actor | null> {
  let actor = actorByRequest.get(request);
  if (!actor) {
    const header = request.headers.get('authorization');
    const key = header ? BEARER.exec(header)?.[1] : undefined;
    actor = key ? deps.keys.verify(key) : Promise.resolve(null);
    actorByRequest.set(request, actor);
    // Anything in Authorization is a credential; one that is not even a bearer key is refused too.
    if (header !== null) presentedKeyVerdicts.set(sentRequest(request), actor);
  }
  return actor;
}

/** Records that `rebuilt` stands for `original` (the REST layer rewrites URLs, headers and bodies). */
export function rebuiltFrom(original: Request, rebuilt: Request): void {
  sentAs.set(rebuilt, sentRequest(original));
}

/** The request as the client sent it: what per-request records (rate limits) are kept under. */
export function sentRequest(request: Request): Request {
  return sentAs.get(request) ?? request;
}

/**
 * The verdict on the key the client presented with this request (on whichever request of the REST
 * layer it was verified), or undefined when none was presented or none has been looked at yet.
 */
export function presentedKeyVerdict(request: Request): Promise<Actor | null> | undefined {
  return presentedKeyVerdicts.get(sentRequest(request));
}

/** A request rebuilt from another (the REST layer rewrites URLs and bodies) keeps its verified actor. */
export function carryActor(from: Request, to: Request): void {
  rebuiltFrom(from, to);
  const actor = actorByRequest.get(from);
  if (actor) actorByRequest.set(to, actor);
}

export async function createContext(deps: AppDeps, request: Request): Promise<Context> {
  const actor = await actorFromRequest(deps, request);
  const { config, now, files, geocoder } = deps;
  return { config, now, files, geocoder, db: forActor(deps.db, actor), unscopedDb: deps.db, request, actor, logger: requestLogger(deps.logger, sentRequest(request)) };
}
