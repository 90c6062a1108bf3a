// LRU bounded in entries and in bytes, counting keys and per-entry overhead too: a bound on values
// alone lets a stream of small distinct answers grow the process without end.

export const ENTRY_OVERHEAD_BYTES = 160;

export interface CacheBounds {
  maxEntries: number;
  maxBytes: number;
}

export class BoundedCache<V> {
  readonly #entries = new Map<string, { value: V; bytes: number }>();
  readonly #bounds: CacheBounds;
  readonly #sizeOf: (value: V) => number;
  #bytes = 0;

  constructor(bounds: CacheBounds, sizeOf: (value: V) => number) {
    this.#bounds = bounds;
    this.#sizeOf = sizeOf;
  }

  get size(): number {
    return this.#entries.size;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** A value too big for a sixteenth of the bound is not kept, so one entry cannot flush the cache. */
  set(key: string, value: V): void {
    this.delete(key);
    const bytes = key.length * 2 + this.#sizeOf(value) + ENTRY_OVERHEAD_BYTES;
    if (bytes > this.#bounds.maxBytes / 16) return;
    while (this.#entries.size > 0 && (this.#entries.size >= this.#bounds.maxEntries || this.#bytes + bytes > this.#bounds.maxBytes)) {
      this.delete(this.#entries.keys().next().value as string);
    }
    this.#entries.set(key, { value, bytes });
    this.#bytes += bytes;
  }

  deleteWhere(matches: (value: V) => boolean): void {
    for (const [key, entry] of this.#entries) if (matches(entry.value)) this.delete(key);
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }

  clear(): void {
    this.#entries.clear();
    this.#bytes = 0;
  }
}
