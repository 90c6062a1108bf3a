// What every resolver receives: the database, the clock and the caller, built once per request
// for both doors (Sofa runs Yoga's context factory for REST calls too).
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/client.ts';
import type { Actor } from './auth/api-keys.ts';
import type { KeyVerifier } from './auth/key-cache.ts';
import type { ReadCacheOptions } from './response-cache.ts';
import { forActor } from './db/scoped.ts';
import type { Lifecycle } from './lifecycle.ts';
import type { FileStorage } from './storage/file-storage.ts';

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
  /** Set when the app runs behind the process's HTTP server; absent, the app is never draining. */
  lifecycle?: Lifecycle;
}

export interface Context extends AppDeps {
  /**
   * The caller's client: every read and write is kept to the key's dealerships (src/db/scoped.ts),
   * and a request without a key reaches no dealership's rows at all.
   */
  db: Db;
  /**
   * The escape hatch, for the few reads that are deliberately global (the public redirect, the
   * partner sign-on landing, the website lookup that tells 403 from 404, phone calls' per-key dedupe
   * records). Never for data a key reads or writes as its own.
   */
  unscopedDb: Db;
  request: Request;
  /** null when no key, or no valid key, was presented. */
  actor: Actor | null;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

/** The key is verified once per request even when the REST layer looks at it before the context is built. */
const actorByRequest = new WeakMap<Request, Promise<Actor | null>>();

export function actorFromRequest(deps: AppDeps, request: Request): Promise<Actor | null> {
  let actor = actorByRequest.get(request);
  if (!actor) {
    const header = request.headers.get('authorization');
    const key = header ? BEARER.exec(header)?.[1] : undefined;
    actor = key ? deps.keys.verify(key) : Promise.resolve(null);
    actorByRequest.set(request, actor);
  }
  return actor;
}

/** A request rebuilt from another (the REST layer rewrites URLs and bodies) keeps its verified actor. */
export function carryActor(from: Request, to: Request): void {
  const actor = actorByRequest.get(from);
  if (actor) actorByRequest.set(to, actor);
}

export async function createContext(deps: AppDeps, request: Request): Promise<Context> {
  const actor = await actorFromRequest(deps, request);
  return { ...deps, db: forActor(deps.db, actor), unscopedDb: deps.db, request, actor };
}
