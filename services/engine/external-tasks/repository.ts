/**
 * The `externalTasks` collection (docs/reference/external-tasks.md): every access goes through here.
 * A lock is one conditional update of the task (`availableAt` passed, not suspended), so two
 * workers — on one engine or on several over the store — never hold a task at once; every change a
 * worker makes is conditional on the lock it holds, never read-then-write.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { Collections, type StoredExternalTask } from '../../../store/collections.js'
import type { AtomicWrite, Collection, Filter, Store } from '../../../store/port.js'
import { type Tenant, tenantFilter } from '../../../store/tenant.js'

declare module 'fastify' {
  interface FastifyInstance {
    externalTasks: ExternalTaskRepository
  }
}

/** A task just locked, and whether a lapsed lock of another worker was taken over. */
export interface LockedTask {
  task: StoredExternalTask
  lapsed: boolean
}

/** The filter of a task the worker holds an unexpired lock on. */
export function heldBy(externalTaskId: string, workerId: string, now: Date): Filter {
  return { _id: externalTaskId, workerId, lockExpiresAt: { $gt: now } }
}

export class ExternalTaskRepository {
  constructor(private readonly collection: Collection<StoredExternalTask>) {}

  async ensureIndexes(): Promise<void> {
    // fetchAndLock: the tenant's tasks of a topic that are available now, oldest first.
    await this.collection.createIndex(
      { organizationId: 1, appId: 1, topic: 1, suspended: 1, availableAt: 1 },
      { name: 'engine_external_tasks_available' },
    )
    // Suspending, resuming, purging an instance reach its tasks.
    await this.collection.createIndex({ processInstanceId: 1 }, { name: 'engine_external_tasks_instance' })
  }

  /** The tenant's task (null for another tenant's). */
  find(tenant: Tenant, externalTaskId: string): Promise<StoredExternalTask | null> {
    return this.collection.findOne({ _id: externalTaskId, ...tenantFilter(tenant) })
  }

  /** Ids of the tenant's tasks of the topics that may be handed out at `now`, oldest first. */
  async available(tenant: Tenant, topics: readonly string[], now: Date, limit: number): Promise<StoredExternalTask[]> {
    return this.collection
      .find(
        { ...tenantFilter(tenant), topic: { $in: [...topics] }, suspended: false, availableAt: { $lte: now } },
        { sort: { availableAt: 1 }, limit },
      )
      .toArray()
  }

  /** Locks the task for the worker until `until`, if it is still available at `now`; null when another worker was first. */
  async lock(externalTaskId: string, workerId: string, now: Date, until: Date): Promise<LockedTask | null> {
    const before = await this.collection.findOneAndUpdate(
      { _id: externalTaskId, suspended: false, availableAt: { $lte: now } },
      { $set: { workerId, lockExpiresAt: until, availableAt: until } },
      { returnDocument: 'before' },
    )
    if (!before) return null
    const lapsed = before.workerId !== undefined && before.lockExpiresAt !== undefined && before.lockExpiresAt.getTime() <= now.getTime()
    return { task: { ...before, workerId, lockExpiresAt: until, availableAt: until }, lapsed }
  }

  /** Moves the worker's lock to end at `until`; false when the worker holds no lock on it. */
  async extendLock(externalTaskId: string, workerId: string, now: Date, until: Date): Promise<boolean> {
    const result = await this.collection.updateOne(heldBy(externalTaskId, workerId, now), {
      $set: { lockExpiresAt: until, availableAt: until },
    })
    return result.matchedCount > 0
  }

  /**
   * The worker gives the task back (an unlock, or a failure with retries left): it is available at
   * `availableAt` and nobody holds it; false when the worker holds no lock on it.
   */
  async release(
    externalTaskId: string,
    workerId: string,
    now: Date,
    availableAt: Date,
    failure?: { retries: number; errorMessage: string },
  ): Promise<boolean> {
    const result = await this.collection.updateOne(heldBy(externalTaskId, workerId, now), {
      $set: { availableAt, ...(failure ?? {}) },
      $unset: { workerId: '', lockExpiresAt: '' },
    })
    return result.matchedCount > 0
  }

  /** Waiting (unlocked or lapsed) tasks by topic, for the metrics. */
  async countWaitingByTopic(now: Date): Promise<Record<string, number>> {
    const rows = await this.collection
      .aggregate<{ _id: string; count: number }>([
        { $match: { suspended: false, $or: [{ lockExpiresAt: { $exists: false } }, { lockExpiresAt: { $lte: now } }] } },
        { $group: { _id: '$topic', count: { $sum: 1 } } },
      ])
      .toArray()
    return Object.fromEntries(rows.map((row) => [row._id, row.count]))
  }
}

/** The write, for a change's atomic batch, that stores it only while the worker holds the task's lock. */
export function lockGuard(externalTaskId: string, workerId: string, now: Date): AtomicWrite {
  return {
    collection: Collections.externalTasks,
    kind: 'updateOne',
    filter: heldBy(externalTaskId, workerId, now),
    update: { $set: { workerId } },
    mustMatch: true,
  }
}

export function externalTaskRepository(store: Store): ExternalTaskRepository {
  return new ExternalTaskRepository(store.collection<StoredExternalTask>(Collections.externalTasks))
}

export default repositoryPlugin('externalTasks', ({ store }) => externalTaskRepository(store), { name: 'external-tasks-repository' })
