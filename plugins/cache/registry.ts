/**
 * Named in-process caches that can be evicted from outside: the cache-evict endpoint inserts an
 * invalidation record and every instance (gateway `fm`, engine `wfm`) applies it to its registry.
 * Gateway caches: `app`, `swagger`, `endpoint`, `users`; engine caches: `app`, `service`, `users`,
 * `webhookSubscriptions` (docs/reference/gateway.md#caches).
 */
export class NamedCache<Value> {
  private readonly entries = new Map<string, Value>()
  private evictions = 0

  constructor(readonly type: string) {}

  /**
   * Moves on at every eviction: a value read from the store before an eviction and cached after it
   * would bring back what the eviction removed, so a reader caches only if this has not moved.
   */
  get generation(): number {
    return this.evictions
  }

  get(key: string): Value | undefined {
    return this.entries.get(key)
  }

  /** The cached value, or the one `create` makes now (cached unless it throws). */
  getOrCreate(key: string, create: () => Value): Value {
    const cached = this.entries.get(key)
    if (cached !== undefined) return cached
    const created = create()
    this.entries.set(key, created)
    return created
  }

  set(key: string, value: Value): void {
    this.entries.set(key, value)
  }

  delete(key: string): void {
    this.evictions++
    this.entries.delete(key)
  }

  clear(): void {
    this.evictions++
    this.entries.clear()
  }

  get size(): number {
    return this.entries.size
  }
}

export class CacheRegistry {
  private readonly caches = new Map<string, NamedCache<unknown>>()
  private catchUp: () => Promise<void> = () => Promise.resolve()

  /** Set by the caches plugin: how this instance applies the invalidations recorded so far. */
  followInvalidations(catchUp: () => Promise<void>): void {
    this.catchUp = catchUp
  }

  /**
   * Resolves once every invalidation recorded before this call is applied here. A read of a cache
   * that a write elsewhere can make stale (deployed models) awaits it first, so that a request sent
   * after the write was answered never sees what it replaced.
   */
  upToDate(): Promise<void> {
    return this.catchUp()
  }

  /** The cache of this type (one per type per instance); created on first use. */
  cache<Value>(type: string): NamedCache<Value> {
    let cache = this.caches.get(type)
    if (!cache) {
      cache = new NamedCache<unknown>(type)
      this.caches.set(type, cache)
    }
    return cache as NamedCache<Value>
  }

  /** Evicts one key, or every entry, of one type or of all types (`all`). */
  evict(type: string, id?: string): void {
    const targets = type === 'all' ? [...this.caches.values()] : [this.caches.get(type)].filter((cache) => cache !== undefined)
    for (const cache of targets) {
      if (id === undefined) cache.clear()
      else cache.delete(id)
    }
  }

  types(): string[] {
    return [...this.caches.keys()]
  }
}
