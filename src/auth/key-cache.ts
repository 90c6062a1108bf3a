// Verifying API keys without a database round trip per request. A verdict (valid with its actor, or
// not valid) is remembered for a short time, `API_KEY_CACHE_TTL_MS`, and never past the key's own
// expiry or its secret's retirement, which are exact. A revocation or a change of permissions or
// dealerships made elsewhere (the keys CLI, another instance) is seen:
// - at once where Redis is configured: the change is published and every instance forgets the key,
//   then tells those that asked (`onChange`: the live event hub, whose open streams of the key check
//   it again at once);
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
  /**
   * Calls `listener` with each key forgotten because it changed, once its verdict is gone (so a key
   * verified from the listener is looked up afresh). Returns the function that stops it.
   */
  onChange(listener: (apiKeyId: number) => void): () => void;
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
  const changeListeners = new Set<(apiKeyId: number) => void>();
  // Counts the changes heard: a lookup that began before one may have read the key as it was, so it
  // is neither remembered nor shared with a verification that begins after it.
  let changesHeard = 0;

  function forget(apiKeyId: number): void {
    changesHeard += 1;
    inFlight.clear();
    verdicts.deleteWhere((verdict) => verdict.actor?.apiKeyId === apiKeyId);
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
    if (ttlMs > 0 && changesHeard === before) {
      verdicts.set(id, verdict);
    }
    return verdict;
  }

  const unsubscribe = changes?.subscribe(changed) ?? (() => undefined);

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
    onChange(listener) {
      changeListeners.add(listener);
      return () => changeListeners.delete(listener);
    },
    close() {
      unsubscribe();
      changeListeners.clear();
    },
  };
}
