// Verifying API keys without a database round trip per request. A verdict outlives neither the TTL
// nor the key's expiry or its secret's retirement; a change made elsewhere is seen at once with Redis,
// otherwise within the TTL, the stated bound.
import { hash } from 'node:crypto';
import { boundedCache, deleteWhere, type CacheBounds } from '../lib/bounded-cache.ts';
import { lastUseIsStale, lookUpKey, recordKeyUse, type Actor } from './api-keys.ts';
import type { Db } from '../db/client.ts';

/** Announces key changes to every instance; absent without Redis. */
export interface KeyChangeFeed {
  publish(apiKeyId: number): Promise<void>;
  subscribe(listener: (apiKeyId: number) => void): () => void;
}

export type KeyVerifier = ReturnType<typeof createKeyVerifier>;

interface KeyVerifierOptions {
  db: Db;
  now: () => Date;
  ttlMs: number;
  bounds?: CacheBounds;
  changes?: KeyChangeFeed | null;
}

interface Verdict {
  actor: Actor | null;
  expiresAt: number;
  /** When this instance last knew last_used_at to be written. */
  lastUsedAt: Date | null;
}

// Verdicts are filed under a digest of the presented key, so the cache never holds a usable secret.
const digest = (key: string): string => hash('sha256', key, 'base64url');

// Bounded in bytes too, so a key restricted to many dealerships counts for what it holds.
const KEY_CACHE_BOUNDS: CacheBounds = { maxEntries: 10_000, maxBytes: 8 * 1024 * 1024 };

function verdictBytes(verdict: Verdict): number {
  const actor = verdict.actor;
  if (!actor) return 64;
  let bytes = 128;
  for (const permission of actor.permissions) bytes += 40 + permission.length * 2;
  for (const app of actor.documentApps ?? []) bytes += 40 + app.length * 2;
  return bytes + (actor.dealershipIds?.length ?? 0) * 8;
}

export function createKeyVerifier({ db, now, ttlMs, bounds = KEY_CACHE_BOUNDS, changes = null }: KeyVerifierOptions) {
  const verdicts = boundedCache<Verdict>(bounds, verdictBytes);
  // Several requests with one key at the same moment share one lookup.
  const inFlight = new Map<string, Promise<Verdict>>();
  const changeListeners = new Set<(apiKeyId: number) => void>();
  // A lookup begun before a change may have read the old key: it is neither remembered nor shared.
  let changesHeard = 0;

  function forget(apiKeyId: number): void {
    changesHeard += 1;
    inFlight.clear();
    deleteWhere(verdicts, (verdict) => verdict.actor?.apiKeyId === apiKeyId);
  }

  function changed(apiKeyId: number): void {
    forget(apiKeyId);
    for (const listener of changeListeners) listener(apiKeyId);
  }

  async function lookUp(id: string, key: string, at: Date): Promise<Verdict> {
    const before = changesHeard;
    const found = await lookUpKey(db, key, at);
    const until = Math.min(at.getTime() + ttlMs, found?.validUntil?.getTime() ?? Number.POSITIVE_INFINITY);
    const verdict: Verdict = { actor: found?.actor ?? null, expiresAt: until, lastUsedAt: found?.lastUsedAt ?? null };
    if (ttlMs > 0 && changesHeard === before) verdicts.set(id, verdict);
    return verdict;
  }

  const unsubscribe = changes?.subscribe(changed) ?? (() => undefined);

  return {
    async verify(key: string): Promise<Actor | null> {
      const at = now();
      const id = digest(key);
      let verdict = verdicts.get(id);
      if (verdict && verdict.expiresAt <= at.getTime()) {
        verdicts.delete(id);
        verdict = undefined;
      }
      if (!verdict) {
        let pending = inFlight.get(id);
        if (!pending) {
          const lookup: Promise<Verdict> = lookUp(id, key, at).finally(() => {
            if (inFlight.get(id) === lookup) inFlight.delete(id);
          });
          pending = lookup;
          inFlight.set(id, lookup);
        }
        verdict = await pending;
      }
      if (verdict.actor && lastUseIsStale(verdict.lastUsedAt, at)) {
        verdict.lastUsedAt = at;
        await recordKeyUse(db, verdict.actor.apiKeyId, at);
      }
      return verdict.actor;
    },
    forget,
    /** Called once the verdict is gone, so a key verified from the listener is looked up afresh. */
    onChange(listener: (apiKeyId: number) => void): () => void {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    close(): void {
      unsubscribe();
      changeListeners.clear();
    },
  };
}
