/**
 * The `batchJobs` collection. Every state change of a job is one atomic `findOneAndUpdate` /
 * `updateOne` whose filter states the state it leaves (and, while running, the lease holder), so any
 * number of engines on one store never run a job twice and a stale worker cannot overwrite the
 * outcome of the one that took its job over.
 */
import { randomUUID } from 'node:crypto'
import { CollectionRepository } from '../../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import { isDuplicateKeyError, type Store } from '../../../../store/port.js'
import { type BatchJobStatus, type BulkProgress, Collections, type StoredBatchJob } from '../../../../store/collections.js'
import type { BatchJobKind, ClaimedBatchJob } from './handlers.js'

/** Batch jobs by status. */
export type BatchJobCounts = Record<BatchJobStatus, number>

declare module 'fastify' {
  interface FastifyInstance {
    batchJobs: BatchJobRepository
  }
}

/** A job that failed this many times is `failed` (docs/reference/statuses.md#batch-job-status). */
export const MAX_TRIES = 10

export const BATCH_JOB_STATUSES: readonly BatchJobStatus[] = ['waiting', 'running', 'retrying', 'done', 'failed']

const DUE_STATUSES: BatchJobStatus[] = ['waiting', 'retrying']
/**
 * A filter on `status` for the jobs no worker has claimed yet: what the end of the wait or task they
 * were for removes (a running one finishes and finds nothing to do).
 */
export const NOT_CLAIMED = { $in: DUE_STATUSES }
const FINISHED_STATUSES: BatchJobStatus[] = ['done', 'failed']

export interface NewBatchJob {
  kind: BatchJobKind
  appId: string
  organizationId?: string
  payload: Record<string, unknown>
  dueAt: Date
  scheduleKey?: string
}

/** Where a failed try leaves the job: due again later, or `failed` for good. */
export type FailureOutcome = { status: 'retrying'; dueAt: Date } | { status: 'failed' }

export interface BatchJobPageFilter {
  appId: string
  organizationId: string
  status?: BatchJobStatus | undefined
  kind?: BatchJobKind | undefined
}

/** Where a page of jobs ended (the last job's creation time and id). */
export interface BatchJobPosition {
  createdAt: Date
  jobId: string
}

export interface RetryScope {
  appId?: string
  organizationId?: string
}

/**
 * A new `waiting` job as stored: `enqueue` inserts it alone, a process change may insert it in its
 * own atomic commit (the escalations of the tasks it creates).
 */
export function newBatchJob(job: NewBatchJob, now: Date): StoredBatchJob {
  const jobId = randomUUID()
  return {
    _id: jobId,
    jobId,
    kind: job.kind,
    status: 'waiting',
    appId: job.appId,
    ...(job.organizationId === undefined ? {} : { organizationId: job.organizationId }),
    payload: job.payload,
    tryCount: 0,
    dueAt: job.dueAt,
    createdAt: now,
    updatedAt: now,
    ...(job.scheduleKey === undefined ? {} : { scheduleKey: job.scheduleKey }),
  }
}

export class BatchJobRepository extends CollectionRepository<StoredBatchJob> {
  /** Named so they never clash with indexes another service creates on the same collection. */
  protected readonly indexes = [
    { keys: { status: 1, dueAt: 1 }, name: 'engine_batch_due' },
    { keys: { status: 1, leaseUntil: 1 }, name: 'engine_batch_lease' },
    { keys: { status: 1, finishedAt: 1 }, name: 'engine_batch_finished' },
    { keys: { status: 1, lastFailureAt: 1 }, name: 'engine_batch_failures' },
    { keys: { appId: 1, organizationId: 1, createdAt: -1, jobId: -1 }, name: 'engine_batch_tenant_list' },
    {
      keys: { scheduleKey: 1 },
      name: 'engine_batch_schedule_tick',
      unique: true,
      partialFilterExpression: { scheduleKey: { $exists: true } },
    },
  ] as const

  /** Inserts a `waiting` job. With a `scheduleKey` another engine may have inserted first: then null. */
  async enqueue(job: NewBatchJob, now: Date): Promise<StoredBatchJob | null> {
    const stored = newBatchJob(job, now)
    try {
      await this.collection.insertOne({ ...stored })
      return stored
    } catch (error) {
      if (job.scheduleKey !== undefined && isDuplicateKeyError(error)) return null
      throw error
    }
  }

  /** Claims the job due longest ago (`waiting` or `retrying`) of the given kinds, or null. */
  async claimDue(kinds: readonly BatchJobKind[], owner: string, now: Date, leaseMs: number): Promise<ClaimedBatchJob | null> {
    return (await this.collection.findOneAndUpdate(
      { status: { $in: DUE_STATUSES }, dueAt: { $lte: now }, kind: { $in: kinds } },
      { $set: { status: 'running', leaseOwner: owner, leaseUntil: new Date(now.getTime() + leaseMs), updatedAt: now } },
      { sort: { dueAt: 1 }, returnDocument: 'after' },
    )) as ClaimedBatchJob | null
  }

  /**
   * Claims a `running` job whose lease lapsed (its engine stopped or lost the store). That try
   * counts as failed: `tryCount` goes up, so a job that kills its engine every time ends `failed`.
   */
  async claimLapsed(kinds: readonly BatchJobKind[], owner: string, now: Date, leaseMs: number): Promise<ClaimedBatchJob | null> {
    return (await this.collection.findOneAndUpdate(
      { status: 'running', leaseUntil: { $lt: now }, kind: { $in: kinds } },
      {
        $set: {
          leaseOwner: owner,
          leaseUntil: new Date(now.getTime() + leaseMs),
          updatedAt: now,
          lastError: 'the lease lapsed before the job finished (its engine stopped)',
          lastFailureAt: now,
        },
        $inc: { tryCount: 1 },
      },
      { sort: { leaseUntil: 1 }, returnDocument: 'after' },
    )) as ClaimedBatchJob | null
  }

  /** Extends the lease while the job runs; false when this owner no longer holds it. */
  async renewLease(job: ClaimedBatchJob, owner: string, leaseUntil: Date): Promise<boolean> {
    const result = await this.collection.updateOne({ _id: job._id, status: 'running', leaseOwner: owner }, { $set: { leaseUntil } })
    return result.matchedCount === 1
  }

  /** A running job's progress (a bulk operation's), kept while this owner holds it; false when the lease was lost. */
  async recordProgress(
    job: ClaimedBatchJob,
    owner: string,
    progress: BulkProgress,
    cursor: string | undefined,
    now: Date,
  ): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: job._id, status: 'running', leaseOwner: owner },
      { $set: { progress, updatedAt: now, ...(cursor === undefined ? {} : { cursor }) } },
    )
    return result.matchedCount === 1
  }

  /** `running` → `done`; false when the lease was lost meanwhile (the new holder decides). */
  async complete(job: ClaimedBatchJob, owner: string, now: Date): Promise<boolean> {
    return this.release(job, owner, { status: 'done', updatedAt: now, finishedAt: now })
  }

  /** `running` → `retrying` or `failed`, `tryCount` + 1, the error kept; false when the lease was lost. */
  async recordFailure(job: ClaimedBatchJob, owner: string, outcome: FailureOutcome, error: string, now: Date): Promise<boolean> {
    const set: Partial<StoredBatchJob> =
      outcome.status === 'retrying'
        ? { status: 'retrying', dueAt: outcome.dueAt, lastError: error, lastFailureAt: now, updatedAt: now }
        : { status: 'failed', lastError: error, lastFailureAt: now, updatedAt: now, finishedAt: now }
    return this.release(job, owner, set, { tryCount: 1 })
  }

  /**
   * `running` → `waiting` until `dueAt`, the try not counted: the handler found the job cannot run
   * yet (an escalation of a suspended instance); false when the lease was lost.
   */
  async defer(job: ClaimedBatchJob, owner: string, dueAt: Date, now: Date): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: job._id, status: 'running', leaseOwner: owner },
      { $set: { status: 'waiting', dueAt, updatedAt: now }, $unset: { leaseOwner: '', leaseUntil: '' } },
    )
    return result.matchedCount === 1
  }

  /** `failed` for good without running again: a lapsed claim that was its last try. */
  async failClaimed(job: ClaimedBatchJob, owner: string, now: Date): Promise<boolean> {
    return this.release(job, owner, { status: 'failed', updatedAt: now, finishedAt: now })
  }

  /** Ends this owner's claim with `set`; false when the lease was lost meanwhile. */
  private async release(
    job: ClaimedBatchJob,
    owner: string,
    set: Partial<StoredBatchJob>,
    increment?: { tryCount: number },
  ): Promise<boolean> {
    const result = await this.collection.updateOne(
      { _id: job._id, status: 'running', leaseOwner: owner },
      { $set: set, ...(increment ? { $inc: increment } : {}), $unset: { leaseOwner: '', leaseUntil: '' } },
    )
    return result.matchedCount === 1
  }

  /** The failed jobs whose last failure is at or after `since` go back to `waiting` with `tryCount` 0. */
  async requeueFailed(since: Date, scope: RetryScope, now: Date): Promise<number> {
    const filter: Record<string, unknown> = { status: 'failed', lastFailureAt: { $gte: since } }
    if (scope.appId !== undefined) filter.appId = scope.appId
    if (scope.organizationId !== undefined) filter.organizationId = scope.organizationId
    const result = await this.collection.updateMany(filter, {
      $set: { status: 'waiting', tryCount: 0, dueAt: now, updatedAt: now },
      $unset: { finishedAt: '' },
    })
    return result.modifiedCount
  }

  /** Removes the `done` and `failed` jobs that finished before `before`. */
  async removeFinishedBefore(before: Date): Promise<number> {
    const result = await this.collection.deleteMany({ status: { $in: FINISHED_STATUSES }, finishedAt: { $lt: before } })
    return result.deletedCount
  }

  /** Counts by status through the `status` indexes, one count each: cheap enough for every metrics scrape. */
  async countEachStatus(): Promise<BatchJobCounts> {
    const count = (status: BatchJobStatus): Promise<number> => this.collection.countDocuments({ status })
    const [waiting, running, retrying, done, failed] = await Promise.all(
      (['waiting', 'running', 'retrying', 'done', 'failed'] as const).map(count),
    )
    return { waiting, running, retrying, done, failed }
  }

  /**
   * The tenant's jobs, newest first (then by job id), from after `after` on; `limit` at most.
   * The `engine_batch_tenant_list` index serves it.
   */
  async page(filter: BatchJobPageFilter, limit: number, after: BatchJobPosition | undefined): Promise<StoredBatchJob[]> {
    const query: Record<string, unknown> = { appId: filter.appId, organizationId: filter.organizationId }
    if (filter.status !== undefined) query.status = filter.status
    if (filter.kind !== undefined) query.kind = filter.kind
    if (after) query.$or = [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, jobId: { $lt: after.jobId } }]
    return this.collection.find(query, { sort: { createdAt: -1, jobId: -1 }, limit }).toArray()
  }

  async findByJobId(jobId: string): Promise<StoredBatchJob | null> {
    return this.collection.findOne({ jobId })
  }

  async find(filter: Record<string, unknown>): Promise<StoredBatchJob[]> {
    return this.collection.find(filter, { sort: { createdAt: 1 } }).toArray()
  }
}

export function batchJobRepository(store: Store): BatchJobRepository {
  return new BatchJobRepository(store.collection<StoredBatchJob>(Collections.batchJobs))
}

export default repositoryPlugin('batchJobs', ({ store }) => batchJobRepository(store), { name: 'batch-jobs' })
