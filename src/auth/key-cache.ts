// Verifying API keys without a database round trip per request. A verdict (valid with its actor, or
// not valid) is remembered for a short time, `API_KEY_CACHE_TTL_MS`, and never past the key's own
// expiry or its secret's retirement, which are exact. A revocation or a change of permissions or
// dealerships made elsewhere (the keys CLI, another instance) is seen:
// - at once where Redis is configured: the change is published and every instance forgets the key;
// - otherwise within the TTL (5 s by default), the stated bound.
import { createHash } from 'node:crypto';
import { BoundedCache, type CacheBounds } from '../lib/bounded-cache.ts';
import { lastUseIsStale, lookUpKey, recordKeyUse } from './api-keys.ts';
import type { Actor } from './api-keys.ts';
import type { Db } from '../db/client.ts';

/** Announces key changes to every instance (Redis publish/subscribe); absent on a single instance without Redis. */
export interface KeyChangeFeed {
  publish(apiKeyId: number): Promise<void>;
  /** Returns the function that stops listening. */
  subscribe(listener: (apiKeyId: number) => void): () => void;
}

export interface KeyVerifier {
  /** The caller of a presented key, or null when it is not (or no longer) valid. */
  verify(key: string): Promise<Actor | null>;
  /** Drops what is remembered about a key, after it changed. */
  forget(apiKeyId: number): void;
  close(): void;
}

interface KeyVerifierOptions {
  db: Db;
  now: () => Date;
  ttlMs: number;
  /** Bounds memory whatever keys are presented, in verdicts and in bytes (least recently used go first). */
  bounds?: CacheBounds;
  changes?: KeyChangeFeed | null;
}

interface Verdict {
  actor: Actor | null;
  /** Epoch ms after which the verdict must be asked for again. */
  expiresAt: number;
  /** When this instance last knew last_used_at to be written. */
  lastUsedAt: Date | null;
}

// Verdicts are filed under a digest of the presented key, so the cache never holds a usable secret.
const digest = (key: string): string => createHash('sha256').update(key).digest('base64url');

/**
 * The verdicts' bound: 10,000 keys, and 8 MB with their digests and bookkeeping, so a key restricted
 * to many dealerships counts for what it holds (docs/caching.md, "Bounded by construction").
 */
const KEY_CACHE_BOUNDS: CacheBounds = { maxEntries: 10_000, maxBytes: 8 * 1024 * 1024 };

/** A verdict's own bytes: its fields, each permission's name and Set slot, each dealership id. */
function verdictBytes(verdict: Verdict): number {
  const actor = verdict.actor;
  if (!actor) return 64;
  let bytes = 128;
  for (const permission of actor.permissions) bytes += 40 + permission.length * 2;
  return bytes + (actor.dealershipIds?.length ?? 0) * 8;
}

export function createKeyVerifier({ db, now, ttlMs, bounds = KEY_CACHE_BOUNDS, changes = null }: KeyVerifierOptions): KeyVerifier {
  const verdicts = new BoundedCache<Verdict>(bounds, verdictBytes);
  // Several requests with one key at the same moment share one lookup.
  const inFlight = new Map<string, Promise<Verdict>>();

  function forget(apiKeyId: number): void {
    verdicts.deleteWhere((verdict) => verdict.actor?.apiKeyId === apiKeyId);
  }

  async function lookUp(id: string, key: string, at: Date): Promise<Verdict> {
    const found = await lookUpKey(db, key, at);
    const until = Math.min(at.getTime() + ttlMs, found?.validUntil?.getTime() ?? Number.POSITIVE_INFINITY);
    const verdict: Verdict = { actor: found?.actor ?? null, expiresAt: until, lastUsedAt: found?.lastUsedAt ?? null };
    if (ttlMs > 0) {
      verdicts.set(id, verdict);
    }
    return verdict;
  }

  const unsubscribe = changes?.subscribe(forget) ?? (() => undefined);

  return {
    async verify(key) {
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
          pending = lookUp(id, key, at).finally(() => inFlight.delete(id));
          inFlight.set(id, pending);
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
    close: unsubscribe,
  };
}
