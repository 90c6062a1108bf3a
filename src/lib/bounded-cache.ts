// The one in-memory cache every tier keyed by caller input uses (the response cache's results, the
// answer tier, the compression memo, the API key verdicts): least recently used first out, bounded both in entries and in
// bytes, where an entry's bytes count its key (two bytes a UTF-16 unit), its value as the tier
// measures it, and ENTRY_OVERHEAD_BYTES for the Map slot and the objects around them. A bound that
// counts only values lets a stream of small distinct answers grow the process without end (their keys
// and bookkeeping outweigh them), so it counts all three.

/** What one entry costs besides its key and value: the Map's slot, the entry object, its fields. */
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

  /** `sizeOf`: the value's own bytes, as the tier can measure them. */
  constructor(bounds: CacheBounds, sizeOf: (value: V) => number) {
    this.#bounds = bounds;
    this.#sizeOf = sizeOf;
  }

  get size(): number {
    return this.#entries.size;
  }

  /** Everything the entries hold, as counted against `maxBytes`. */
  get bytes(): number {
    return this.#bytes;
  }

  /** The value, now the most recently used; undefined when absent. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    // A Map iterates in insertion order: re-inserted, the entry is the most recently used.
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** Stores the value, dropping the least recently used entries to make room; a value too big for a sixteenth of the bound is not kept. */
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

  /** Drops every entry whose value matches (a key's verdicts after the key changed). */
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
