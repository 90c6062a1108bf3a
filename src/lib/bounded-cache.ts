// LRU bounded in entries and in bytes, counting keys and per-entry overhead too: a bound on values
// alone lets a stream of small distinct answers grow the process without end. lru-cache keeps the order.
import { LRUCache } from 'lru-cache';

export const ENTRY_OVERHEAD_BYTES = 160;

export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

export type BoundedCache<V extends object | string> = LRUCache<string, V>;

/** A value too big for a sixteenth of the bound is not kept, so one entry cannot flush the cache. */
export function boundedCache<V extends object | string>(bounds: CacheBounds, sizeOf: (value: V) => number): BoundedCache<V> {
  return new LRUCache<string, V>({
    max: bounds.maxEntries,
    maxSize: bounds.maxBytes,
    maxEntrySize: bounds.maxBytes / 16,
    sizeCalculation: (value, key) => Math.ceil(key.length * 2 + sizeOf(value) + ENTRY_OVERHEAD_BYTES),
  });
}

export function deleteWhere<V extends object | string>(cache: BoundedCache<V>, matches: (value: V) => boolean): void {
  for (const [key, value] of [...cache.entries()]) if (matches(value)) cache.delete(key);
}
