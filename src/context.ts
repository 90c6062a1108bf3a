// What every resolver receives: the database, the clock and the caller, built once per request
// for both doors (Sofa runs Yoga's context factory for REST calls too).
import type { Logger } from 'pino';
import type { Config } from './config.ts';
import type { Db } from './db/client.ts';
import { verifyKey, type Actor } from './auth/api-keys.ts';

/** The long-lived things a request's context is made from. */
export interface AppDeps {
  config: Config;
  db: Db;
  logger: Logger;
  /** The time; tests move it to check expiries. */
  now: () => Date;
}

export interface Context extends AppDeps {
  request: Request;
  /** null when no key, or no valid key, was presented. */
  actor: Actor | null;
}

const BEARER = /^Bearer\s+(\S+)\s*$/i;

export async function actorFromRequest(deps: AppDeps, request: Request): Promise<Actor | null> {
  const header = request.headers.get('authorization');
  const key = header ? BEARER.exec(header)?.[1] : undefined;
  return key ? verifyKey(deps.db, key, deps.now()) : null;
}

export async function createContext(deps: AppDeps, request: Request): Promise<Context> {
  return { ...deps, request, actor: await actorFromRequest(deps, request) };
}
