// Every in-memory cache tier keyed by caller input is bounded by construction (src/lib/bounded-cache.ts):
// flooded with distinct entries, each keeps within its entries and its bytes, keys and bookkeeping
// counted, and drops the least recently used first. Sizes are counted, not measured as RSS (the
// benchmark measures RSS: docs/benchmarks.md).
import { describe, expect, it } from 'vitest';
import { memoryAnswerStore, type CachedAnswer } from '../src/gateway/answer-cache.ts';
import { boundedCache, ENTRY_OVERHEAD_BYTES, type CacheBounds } from '../src/lib/bounded-cache.ts';
import { COMPRESSION_MEMO_BOUNDS } from '../src/gateway/compression.ts';
import { MEMORY_CACHE_BOUNDS, memoryReadStore } from '../src/gateway/response-cache.ts';

const small: CacheBounds = { maxEntries: 1_000, maxBytes: 256 * 1024 };

describe('boundedCache', () => {
  it('counts keys and bookkeeping, not only values, and drops the least recently used first', () => {
    const cache = boundedCache<string>({ maxEntries: 3, maxBytes: 1_000_000 }, (value) => value.length);
    cache.set('a', 'x');
    expect(cache.calculatedSize).toBe(2 + 1 + ENTRY_OVERHEAD_BYTES);
    cache.set('b', 'y');
    cache.set('c', 'z');
    expect(cache.get('a')).toBe('x'); // now the most recent
    cache.set('d', 'w');
    expect(cache.get('b')).toBeUndefined();
    expect(cache.size).toBe(3);
    cache.set('a', 'longer');
    expect(cache.calculatedSize).toBe(3 * (2 + ENTRY_OVERHEAD_BYTES) + 1 + 1 + 6);
  });

  it('keeps nothing bigger than a sixteenth of its bytes', () => {
    const cache = boundedCache<string>({ maxEntries: 10, maxBytes: 1_600 }, (value) => value.length);
    cache.set('big', 'v'.repeat(200));
    expect(cache.size).toBe(0);
  });
});

/** Every tier, flooded through its own interface with small values under long distinct keys. */
const tiers: Record<string, { bounds: CacheBounds; flood(count: number): { size: number; bytes: number } }> = {
  'response cache results (memory)': {
    bounds: small,
    flood(count) {
      const store = memoryReadStore(small);
      for (let n = 0; n < count; n += 1)
        void store.set(`${'k'.repeat(200)}${n}`, { result: { data: { n } }, expiresAt: Date.now() + 60_000 }, 60_000);
      return { size: store.cache.size, bytes: store.cache.calculatedSize };
    },
  },
  'answer tier': {
    bounds: small,
    flood(count) {
      const store = memoryAnswerStore(small);
      for (let n = 0; n < count; n += 1) {
        const answer: CachedAnswer = {
          status: 200,
          headers: [['content-type', 'application/json']],
          body: new TextEncoder().encode(`{"n":${n}}`),
          expiresAt: Date.now() + 60_000,
          cost: 1,
          operation: undefined,
        };
        store.set(`GET /api/v1/x?q=${'q'.repeat(300)}${n}`, answer);
      }
      return { size: store.cache.size, bytes: store.cache.calculatedSize };
    },
  },
  'compression memo': {
    bounds: { ...COMPRESSION_MEMO_BOUNDS, maxBytes: 128 * 1024 },
    flood(count) {
      const memo = boundedCache<Buffer>({ ...COMPRESSION_MEMO_BOUNDS, maxBytes: 128 * 1024 }, (compressed) => compressed.byteLength);
      for (let n = 0; n < count; n += 1) memo.set(`br:"${'e'.repeat(64)}${n}"`, Buffer.alloc(20));
      return { size: memo.size, bytes: memo.calculatedSize };
    },
  },
};

describe('every memory cache tier, flooded with distinct small entries', () => {
  it.each(Object.keys(tiers))('%s stays within its entries and bytes', (name) => {
    const tier = tiers[name]!;
    const { size, bytes } = tier.flood(20_000);
    expect(size).toBeGreaterThan(0);
    expect(size).toBeLessThanOrEqual(tier.bounds.maxEntries);
    expect(bytes).toBeLessThanOrEqual(tier.bounds.maxBytes);
    // Had only values been counted, every one of the 20,000 would have been kept.
    expect(size).toBeLessThan(20_000);
  });

  it('the service-wide bounds are the documented ones', () => {
    expect(MEMORY_CACHE_BOUNDS).toEqual({ maxEntries: 50_000, maxBytes: 24 * 1024 * 1024 });
    expect(COMPRESSION_MEMO_BOUNDS).toEqual({ maxEntries: 20_000, maxBytes: 16 * 1024 * 1024 });
  });
});
