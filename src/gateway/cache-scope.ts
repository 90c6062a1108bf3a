import { hash } from 'node:crypto';
import type { Actor } from '../auth/api-keys.ts';

/** The generation every entry name carries; null while it cannot be known (Redis down): no caching then. */
export interface CacheGeneration {
  current(): Promise<string | null>;
  advance(): Promise<void>;
}

const scopeByActor = new WeakMap<Actor, string>();

/** What the caller may see, as one opaque name (memoised: the key cache hands out one Actor per key). */
export function cacheScope(actor: Actor): string {
  let scope = scopeByActor.get(actor);
  if (scope === undefined) {
    const permissions = [...actor.permissions].sort().join(',');
    const dealerships = actor.dealershipIds?.join(',') ?? '*';
    // A key locked to documents must not be served an answer it was given for a document sent before the lock.
    const documents = actor.documentApps?.join(',') ?? '*';
    scope = hash('sha256', `${actor.apiKeyId}|${permissions}|${dealerships}|${documents}`, 'base64url');
    scopeByActor.set(actor, scope);
  }
  return scope;
}
