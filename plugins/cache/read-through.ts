/**
 * A store read served from a named cache (docs/reference/gateway.md#caches): the invalidations
 * recorded so far are applied first, so a read never answers what an acknowledged write through
 * the API replaced; an entry also lapses after `maxAgeMs`, for writes made around the API (a script
 * on the database), which record no invalidation.
 */
import type { CacheRegistry } from './registry.js'

interface CachedValue<Value> {
  value: Value
  cachedAt: number
}

export interface ReadThroughOptions<Value> {
  maxAgeMs: number
  /** Whether a value read from the store is kept (e.g. not a miss, which a later insert must end). */
  keep?: (value: Value) => boolean
  now?: () => number
}

export async function readThrough<Value>(
  caches: CacheRegistry,
  type: string,
  key: string,
  read: () => Promise<Value>,
  { maxAgeMs, keep, now = Date.now }: ReadThroughOptions<Value>,
): Promise<Value> {
  await caches.upToDate()
  const cache = caches.cache<CachedValue<Value>>(type)
  const startedAt = now()
  const cached = cache.get(key)
  if (cached !== undefined && startedAt - cached.cachedAt < maxAgeMs) return cached.value
  const generation = cache.generation
  const value = await read()
  if (cache.generation === generation && (keep?.(value) ?? true)) cache.set(key, { value, cachedAt: startedAt })
  return value
}
