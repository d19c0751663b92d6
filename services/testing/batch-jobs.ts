/** Test support: batch jobs written straight into the store, in the state a test starts from. */
import type { StoredBatchJob } from '../../store/collections.js'

/** A deploy job of hr/acme that failed for good at `failedAt`, after its ten tries; `fields` override any of it. */
export function failedBatchJob(jobId: string, failedAt: Date, fields: Partial<StoredBatchJob> = {}): StoredBatchJob {
  return {
    _id: jobId,
    jobId,
    kind: 'deploy',
    status: 'failed',
    appId: 'hr',
    organizationId: 'acme',
    payload: {},
    tryCount: 10,
    dueAt: failedAt,
    createdAt: failedAt,
    updatedAt: failedAt,
    lastError: 'boom',
    lastFailureAt: failedAt,
    finishedAt: failedAt,
    ...fields,
  }
}
