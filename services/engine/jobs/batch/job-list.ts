/**
 * `POST /external/batchjob/list` and `GET /external/batchjob/:jobId`: the batch jobs of the caller's
 * tenant as operators see them — what runs next, how often it failed and why.
 */
import type { BatchJobList, BatchJobListRequest, BatchJobSummary } from '../../../../openapi/generated/schemas.js'
import { decodeCursor, encodeCursor } from '../../../../lib/paging/cursor.js'
import type { StoredBatchJob } from '../../../../store/collections.js'
import type { BatchJobPosition, BatchJobRepository } from './repository.js'

export const DEFAULT_JOB_PAGE = 50

export interface Tenant {
  appId: string
  organizationId: string
}

/** The statuses in which a job still runs at `dueAt`. */
const WILL_RUN = new Set(['waiting', 'retrying'])

export function jobSummary(job: StoredBatchJob): BatchJobSummary {
  return {
    jobId: job.jobId,
    kind: job.kind,
    status: job.status,
    tryCount: job.tryCount,
    nextRunAt: WILL_RUN.has(job.status) ? new Date(job.dueAt).toISOString() : null,
    lastError: job.lastError ?? null,
    createdAt: new Date(job.createdAt).toISOString(),
    updatedAt: new Date(job.updatedAt).toISOString(),
    ...(job.progress === undefined ? {} : { progress: job.progress }),
  }
}

/** The position a cursor names, or undefined when it is not one this engine issued. */
export function decodeJobCursor(cursor: string): BatchJobPosition | undefined {
  const parts = decodeCursor(cursor, 2)
  if (!parts) return undefined
  const createdAt = new Date(parts[0] as string)
  return Number.isNaN(createdAt.getTime()) ? undefined : { createdAt, jobId: parts[1] as string }
}

export function isTenantJob(job: StoredBatchJob, tenant: Tenant): boolean {
  return job.appId === tenant.appId && job.organizationId === tenant.organizationId
}

/**
 * One page of the tenant's jobs, newest first. `after` is the decoded cursor (the caller refuses a
 * cursor that does not decode); one job more than asked tells whether another page follows.
 */
export async function listJobs(
  repository: BatchJobRepository,
  tenant: Tenant,
  request: BatchJobListRequest,
  after: BatchJobPosition | undefined,
): Promise<BatchJobList> {
  const limit = request.limit ?? DEFAULT_JOB_PAGE
  const jobs = await repository.page({ ...tenant, status: request.status, kind: request.kind }, limit + 1, after)
  const page = jobs.slice(0, limit)
  const last = page[page.length - 1]
  const nextCursor = jobs.length > limit && last ? encodeCursor([new Date(last.createdAt).toISOString(), last.jobId]) : null
  return { items: page.map(jobSummary), nextCursor }
}
