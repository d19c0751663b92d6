/**
 * Task locks (docs/reference/locks.md): one holder per task, lapsing LOCK_TTL_SECONDS after it was taken or
 * renewed. Taking and renewing is one atomic findOneAndUpdate (an upsert on the task id), so two
 * users racing for a free task cannot both get it, whatever number of engines run. Every access
 * to the `taskLocks` collection goes through here.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { type Clock, systemClock } from '../../../plugins/clock/plugin.js'
import { type AtomicWrite, type Collection, isDuplicateKeyError, type Store } from '../../../store/port.js'
import { Collections, type StoredTaskLock } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    taskLocks: TaskLockRepository
  }
}

export type LockOutcome = { acquired: true; lock: StoredTaskLock } | { acquired: false; holder: StoredTaskLock }

/** A lapsed lock freed between our failed claim and the read of its holder: claim again, this often. */
const CLAIM_ATTEMPTS = 3

export class TaskLockRepository {
  constructor(
    private readonly collection: Collection<StoredTaskLock>,
    private readonly ttlSeconds: number,
    private readonly clock: Clock = systemClock,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ userId: 1 })
    // Lapsed locks are treated as free by every query below; the TTL index only tidies them away.
    await this.collection.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 })
  }

  /** Takes the task's lock for the user, or renews it when the user holds it already. */
  async acquire(taskId: string, processInstanceId: string, userId: string, now: Date = this.clock()): Promise<LockOutcome> {
    const expiresAt = new Date(now.getTime() + this.ttlSeconds * 1000)
    for (let attempt = 1; ; attempt++) {
      try {
        const lock = await this.collection.findOneAndUpdate(
          { _id: taskId, $or: [{ userId }, { expiresAt: { $lte: now } }] },
          { $set: { processInstanceId, userId, expiresAt } },
          { upsert: true, returnDocument: 'after' },
        )
        if (lock) return { acquired: true, lock }
      } catch (error) {
        // The upsert collided with the lock document of another, unexpired holder.
        if (!isDuplicateKeyError(error)) throw error
      }
      const holder = await this.holder(taskId, now)
      if (holder && holder.userId !== userId) return { acquired: false, holder }
      if (attempt >= CLAIM_ATTEMPTS) throw new Error(`The lock of task ${taskId} keeps changing hands`)
    }
  }

  /** The unexpired lock of the task, or null when nobody holds it. */
  async holder(taskId: string, now: Date = this.clock()): Promise<StoredTaskLock | null> {
    return this.collection.findOne({ _id: taskId, expiresAt: { $gt: now } })
  }

  /** The unexpired locks of the given tasks (those nobody holds are not among them). */
  async holdersOf(taskIds: readonly string[], now: Date = this.clock()): Promise<StoredTaskLock[]> {
    if (taskIds.length === 0) return []
    return this.collection.find({ _id: { $in: [...taskIds] }, expiresAt: { $gt: now } }).toArray()
  }

  /** Releases the user's lock on the task; true when there was one. */
  async release(taskId: string, userId: string): Promise<boolean> {
    return (await this.collection.deleteOne({ _id: taskId, userId })).deletedCount > 0
  }

  /**
   * The lock of a task the change being stored creates, taken for the user in that change's atomic
   * batch: nobody can hold the lock of a task that did not exist, so no claim is needed, and the task
   * is never stored without the lock it was created with (nor the lock without its task).
   */
  newTaskLock(taskId: string, processInstanceId: string, userId: string, now: Date = this.clock()): AtomicWrite {
    const lock: StoredTaskLock = { _id: taskId, processInstanceId, userId, expiresAt: new Date(now.getTime() + this.ttlSeconds * 1000) }
    return { collection: this.collection.collectionName, kind: 'insertOne', doc: { ...lock } }
  }

  /**
   * The release of the task's lock, whoever holds it, as a write of the atomic batch of the change
   * that ends or cancels the task: the lock goes exactly when the task does.
   */
  taskRelease(taskId: string): AtomicWrite {
    return { collection: this.collection.collectionName, kind: 'deleteMany', filter: { _id: taskId } }
  }

  /** Releases every lock the user holds; how many there were. */
  async releaseAllOf(userId: string): Promise<number> {
    return (await this.collection.deleteMany({ userId })).deletedCount
  }
}

export function taskLockRepository(store: Store, ttlSeconds: number, clock: Clock = systemClock): TaskLockRepository {
  return new TaskLockRepository(store.collection<StoredTaskLock>(Collections.taskLocks), ttlSeconds, clock)
}

export interface TaskLocksPluginOptions {
  ttlSeconds: number
}

export default repositoryPlugin<TaskLocksPluginOptions>(
  'taskLocks',
  ({ store, clock }, options) => taskLockRepository(store, options.ttlSeconds, clock),
  {
    name: 'task-locks-repository',
    dependencies: ['clock'],
  },
)
