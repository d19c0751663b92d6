/**
 * Cache invalidation records (DESIGN.md §6): the cache-evict endpoint (and a model insert) writes
 * one; every instance, gateway or engine, polls for the new ones and applies those aimed at it. The
 * store is the only channel, so it works across any number of processes.
 */
import type { Store } from '../../store/port.js'
import { Collections, type StoredCacheInvalidation, type StoredCounter } from '../../store/collections.js'
import type { CacheRegistry } from './registry.js'

export type CacheTarget = StoredCacheInvalidation['target']

export interface InvalidationRequest {
  target: CacheTarget
  /** A cache type or `all`. */
  cacheType: string
  /** One key; all entries of the type when absent. */
  id?: string
}

/** Records are removed a day after they were written; every instance has applied them by then. */
const RECORD_TTL_SECONDS = 24 * 60 * 60
/**
 * Sequence numbers are handed out before the record is inserted, so a record can become visible
 * after one with a higher number. Pollers therefore re-read the records of this last stretch of
 * time too, and remember which ones they applied.
 */
export const LATE_RECORD_WINDOW_MS = 10_000

function invalidations(store: Store) {
  return store.collection<StoredCacheInvalidation>(Collections.cacheInvalidations)
}

export async function ensureInvalidationIndexes(store: Store): Promise<void> {
  await invalidations(store).createIndex({ sequence: 1 }, { unique: true })
  await invalidations(store).createIndex({ createdAt: 1 }, { expireAfterSeconds: RECORD_TTL_SECONDS })
}

/** Inserts an invalidation record numbered by the store-wide `cacheInvalidations` counter. */
export async function recordInvalidation(
  store: Store,
  request: InvalidationRequest,
  now: Date = new Date(),
): Promise<StoredCacheInvalidation> {
  const counter = await store
    .collection<StoredCounter>(Collections.counters)
    .findOneAndUpdate({ _id: Collections.cacheInvalidations }, { $inc: { value: 1 } }, { upsert: true, returnDocument: 'after' })
  if (!counter) throw new Error('The cacheInvalidations counter was not returned')
  const record: StoredCacheInvalidation = {
    target: request.target,
    cacheType: request.cacheType,
    ...(request.id === undefined ? {} : { id: request.id }),
    sequence: counter.value,
    createdAt: now,
  }
  await invalidations(store).insertOne({ ...record })
  return record
}

/** Applies the invalidation records aimed at one instance, each once. */
export class InvalidationPoller {
  /** The highest sequence applied or skipped. */
  private highest = 0
  /** Sequences handled within the late-record window, with their records' creation times. */
  private readonly handled = new Map<number, number>()

  constructor(
    private readonly store: Store,
    private readonly target: Exclude<CacheTarget, 'all'>,
    private readonly registry: CacheRegistry,
  ) {}

  /** Starts after what exists: what was recorded before this instance started concerns no cache of it. */
  async skipExisting(now: number = Date.now()): Promise<void> {
    await this.read(now, () => undefined)
  }

  /** Applies the new records aimed at this instance; answers how many it applied. */
  async poll(now: number = Date.now()): Promise<number> {
    let applied = 0
    await this.read(now, (record) => {
      if (record.target !== this.target && record.target !== 'all') return
      this.registry.evict(record.cacheType, record.id)
      applied++
    })
    return applied
  }

  private async read(now: number, apply: (record: StoredCacheInvalidation) => void): Promise<void> {
    const windowStart = now - LATE_RECORD_WINDOW_MS
    const records = await invalidations(this.store)
      .find(
        { $or: [{ sequence: { $gt: this.highest } }, { createdAt: { $gte: new Date(windowStart) } }] },
        { sort: { sequence: 1 }, projection: { _id: 0 } },
      )
      .toArray()
    for (const record of records) {
      if (this.handled.has(record.sequence)) continue
      this.handled.set(record.sequence, new Date(record.createdAt).getTime())
      if (record.sequence > this.highest) this.highest = record.sequence
      apply(record)
    }
    // A record older than the window is matched by neither clause again, so it can be forgotten.
    for (const [sequence, createdAt] of this.handled) if (createdAt < windowStart) this.handled.delete(sequence)
  }
}
