// LRU (lru-cache) bounded in entries and bytes, keys and bookkeeping counted: values alone would let small answers pile up.
import { LRUCache } from 'lru-cache';

export const ENTRY_OVERHEAD_BYTES = 160;

export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

export type BoundedCache<V extends object | string> = LRUCache<string, V>;

// The entry bound is kept here, not as lru-cache's `max`: that preallocates `max` slots and rewrites them all on every
// clear(), and every write clears the response cache's tiers. Here, emptying a cache costs what it has held.
class EntryBoundedCache<V extends object | string> extends LRUCache<string, V> {
  constructor(
    private readonly maxEntries: number,
    options: LRUCache.Options<string, V, unknown>,
  ) {
    super(options);
  }

  override set(key: string, value: V, options?: LRUCache.SetOptions<string, V, unknown>): this {
    if (this.size >= this.maxEntries && !this.has(key)) this.pop();
    return super.set(key, value, options);
  }
}

/** A value too big for a sixteenth of the bound is not kept, so one entry cannot flush the cache. */
export function boundedCache<V extends object | string>(bounds: CacheBounds, sizeOf: (value: V) => number): BoundedCache<V> {
  return new EntryBoundedCache<V>(bounds.maxEntries, {
    maxSize: bounds.maxBytes,
    maxEntrySize: bounds.maxBytes / 16,
    sizeCalculation: (value, key) => Math.ceil(key.length * 2 + sizeOf(value) + ENTRY_OVERHEAD_BYTES),
  });
}

export function deleteWhere<V extends object | string>(cache: BoundedCache<V>, matches: (value: V) => boolean): void {
  for (const [key, value] of [...cache.entries()]) if (matches(value)) cache.delete(key);
}
