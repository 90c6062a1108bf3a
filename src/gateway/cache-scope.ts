// What both cache tiers name their entries by, apart from the request itself: the generation (which a
// write advances, src/gateway/response-cache.ts) and what the caller may see. Here, below both tiers,
// so that the result cache and the answer cache in front of it (src/gateway/answer-cache.ts) share
// it without importing each other.
import { createHash } from 'node:crypto';
import type { Actor } from '../auth/api-keys.ts';

/** The generation every entry name carries; null while it cannot be known (Redis down): no caching then. */
export interface CacheGeneration {
  current(): Promise<string | null>;
  advance(): Promise<void>;
}

/** Scopes already worked out: the key cache hands out the same Actor for as long as it remembers the key. */
const scopeByActor = new WeakMap<Actor, string>();

/** What the caller may see, as one opaque name: key id, permissions, dealership set. */
export function cacheScope(actor: Actor): string {
  let scope = scopeByActor.get(actor);
  if (scope === undefined) {
    const permissions = [...actor.permissions].sort().join(',');
    const dealerships = actor.dealershipIds?.join(',') ?? '*';
    scope = createHash('sha256').update(`${actor.apiKeyId}|${permissions}|${dealerships}`).digest('base64url');
    scopeByActor.set(actor, scope);
  }
  return scope;
}
