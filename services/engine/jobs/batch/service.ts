/**
 * `POST /external/batchjob/retry`: the failed jobs whose last failure lies within the look-back
 * window go back to `waiting` with `tryCount` 0 (docs/reference/statuses.md#batch-job-status).
 */
import type { BatchJobRepository, RetryScope } from './repository.js'

/** The look-back window when the request names none. */
export const DEFAULT_RETRY_HOURS = 24

const HOUR_MS = 3_600_000

export interface RetryRequest extends RetryScope {
  nHours?: number
}

/** The start of a look-back window of `nHours` ending `now` (the epoch for windows longer than dates reach). */
export function windowStart(now: Date, nHours: number): Date {
  const start = new Date(now.getTime() - nHours * HOUR_MS)
  return Number.isNaN(start.getTime()) ? new Date(0) : start
}

export function retryMessage(requeued: number, nHours: number): string {
  if (requeued === 0) return `No failed batch job found in the last ${nHours} hours`
  return `${requeued} failed batch ${requeued === 1 ? 'job' : 'jobs'} will run again`
}

/** The tenant of the user who asks, when a user header named one. */
export type RequestingTenant = { appId: string; organizationId: string } | null

/**
 * Which jobs a request may requeue: those of the tenant it names (all when it names none); a named
 * user only their own tenant's, so a body naming another tenant finds nothing (null).
 */
export function retryScope(request: RetryRequest, tenant: RequestingTenant): RetryScope | null {
  if (tenant === null) {
    return {
      ...(request.appId === undefined ? {} : { appId: request.appId }),
      ...(request.organizationId === undefined ? {} : { organizationId: request.organizationId }),
    }
  }
  const otherTenant =
    (request.appId !== undefined && request.appId !== tenant.appId) ||
    (request.organizationId !== undefined && request.organizationId !== tenant.organizationId)
  return otherTenant ? null : { appId: tenant.appId, organizationId: tenant.organizationId }
}

/** Requeues the failed jobs of the window that the request may requeue. */
export async function retryFailedJobs(
  repository: BatchJobRepository,
  request: RetryRequest,
  tenant: RequestingTenant,
  now: Date,
): Promise<{ requeued: number; message: string }> {
  const nHours = request.nHours ?? DEFAULT_RETRY_HOURS
  const scope = retryScope(request, tenant)
  const requeued = scope === null ? 0 : await repository.requeueFailed(windowStart(now, nHours), scope, now)
  return { requeued, message: retryMessage(requeued, nHours) }
}
