/** A bounded least-recently-used cache that counts its hits and misses. */

export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  private hits = 0;
  private misses = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) {
      throw new RangeError(`capacity must be a positive integer, not ${capacity}`);
    }
  }

  get size(): number {
    return this.entries.size;
  }

  /** The value under `key`, now the most recently used; undefined (a miss) when absent. */
  get(key: string): V | undefined {
    if (!this.entries.has(key)) {
      this.misses += 1;
      return undefined;
    }
    const value = this.entries.get(key) as V;
    this.entries.delete(key);
    this.entries.set(key, value);
    this.hits += 1;
    return value;
  }

  /** Store `value` under `key`; the key evicted to make room, if one was. */
  set(key: string, value: V): string | undefined {
    let evicted: string | undefined;
    if (this.entries.has(key)) {
      this.entries.delete(key);
    } else if (this.entries.size >= this.capacity) {
      evicted = this.entries.keys().next().value as string;
      this.entries.delete(evicted);
    }
    this.entries.set(key, value);
    return evicted;
  }

  /** The keys, least recently used first. */
  keys(): string[] {
    return [...this.entries.keys()];
  }

  /** Hits over lookups, 0 before any lookup. */
  hitRate(): number {
    const lookups = this.hits + this.misses;
    return lookups === 0 ? 0 : this.hits / lookups;
  }
}
