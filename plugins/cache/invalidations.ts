/**
 * Cache invalidation records (docs/reference/gateway.md#caches): the cache-evict endpoint (and a model insert) writes
 * one; every instance, gateway or engine, polls for the new ones and applies those aimed at it. The
 * store is the only channel, so it works across any number of processes.
 */
import type { Store } from '../../store/port.js'
import { Collections, type StoredCacheInvalidation, type StoredCounter } from '../../store/collections.js'
import { type Tenant, tenantKey } from '../../store/tenant.js'
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

/**
 * What a deploy records once it stored a model of the tenant: every gateway and engine drops what
 * it kept of that tenant's models (its `app` cache entry), and no other tenant's.
 */
export function recordTenantDeploy(store: Store, tenant: Tenant, now: Date = new Date()): Promise<StoredCacheInvalidation> {
  return recordInvalidation(store, { target: 'all', cacheType: 'app', id: tenantKey(tenant) }, now)
}

/** The `cacheInvalidations` counter: the sequence number of the newest invalidation handed out. */
export async function invalidationCount(store: Store): Promise<number> {
  const counter = await store.collection<StoredCounter>(Collections.counters).findOne({ _id: Collections.cacheInvalidations })
  return counter?.value ?? 0
}

/**
 * Applies the invalidation records aimed at one instance, each once: on a timer (`poll`), and on
 * demand before a cached read (`catchUp`), so that a read never uses what an answered write replaced.
 * Polls never overlap: each one starts after the previous one ended.
 */
export class InvalidationPoller {
  /** The highest sequence applied or skipped. */
  private highest = 0
  /** Every sequence up to this one is applied, skipped, or given up as never written. */
  private settledThrough = 0
  /** Sequences handled within the late-record window (or not yet settled), with their records' creation times. */
  private readonly handled = new Map<number, number>()
  /** Sequences the counter handed out whose records were not there yet, with when that was first seen. */
  private readonly missing = new Map<number, number>()
  /** The poll running now, and the one queued behind it (shared by every caller that waits for it). */
  private running: Promise<number> | undefined
  private queued: Promise<number> | undefined
  /** The counter's version (Store.versionToken) when a read of it found every sequence settled. */
  private settledVersion: unknown

  constructor(
    private readonly store: Store,
    private readonly target: Exclude<CacheTarget, 'all'>,
    private readonly registry: CacheRegistry,
  ) {}

  /** Starts after what exists: what was recorded before this instance started concerns no cache of it. */
  async skipExisting(now: number = Date.now()): Promise<void> {
    const count = await invalidationCount(this.store)
    await this.read(now, () => undefined)
    this.settledThrough = Math.max(this.settledThrough, count)
  }

  /** Applies the new records aimed at this instance; answers how many it applied. */
  poll(now: number = Date.now()): Promise<number> {
    return this.nextPoll(now)
  }

  /**
   * Applies every record whose write was answered before this call: one read of the counter, and a
   * poll only when the counter has moved past what this instance has settled (a deploy happened).
   * On a store that tells the counter's version (the embedded store, `versionToken`), not even the
   * read while the counter is the version a read found settled: an answered write moved it.
   */
  async catchUp(now: number = Date.now()): Promise<void> {
    const version = this.store.versionToken?.(Collections.counters, Collections.cacheInvalidations)
    if (version !== undefined && version === this.settledVersion) return
    const count = await invalidationCount(this.store)
    if (count <= this.settledThrough) {
      // Taken before the read: a write since then is a new version, and the next call reads.
      this.settledVersion = version
      return
    }
    await this.nextPoll(now, count)
    if (count <= this.settledThrough) this.settledVersion = version
  }

  /** A poll that starts after this call: the queued one when there is one, else a new one. */
  private nextPoll(now: number, count = 0): Promise<number> {
    if (this.queued) return this.queued
    const previous = this.running ?? Promise.resolve(0)
    const poll = previous
      .catch(() => 0)
      .then(() => {
        this.queued = undefined
        this.running = poll
        return this.applyNew(now, count)
      })
      .finally(() => {
        if (this.running === poll) this.running = undefined
      })
    this.queued = poll
    return poll
  }

  private async applyNew(now: number, count: number): Promise<number> {
    let applied = 0
    await this.read(now, (record) => {
      if (record.target !== this.target && record.target !== 'all') return
      this.registry.evict(record.cacheType, record.id)
      applied++
    })
    this.settle(Math.max(count, this.highest), now)
    return applied
  }

  /**
   * Moves `settledThrough` over the handled sequences. A sequence whose record is not there yet is
   * a write still under way (its writer has not answered), so it stops the move, until it arrives
   * or the late-record window has passed (a writer that died between counter and insert).
   */
  private settle(through: number, now: number): void {
    while (this.settledThrough < through) {
      const next = this.settledThrough + 1
      if (!this.handled.has(next)) {
        const since = this.missing.get(next) ?? now
        this.missing.set(next, since)
        if (now - since <= LATE_RECORD_WINDOW_MS) return
      }
      this.missing.delete(next)
      this.settledThrough = next
    }
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
    // A settled record older than the window is matched by neither clause again, so it can be forgotten.
    for (const [sequence, createdAt] of this.handled)
      if (createdAt < windowStart && sequence <= this.settledThrough) this.handled.delete(sequence)
  }
}
