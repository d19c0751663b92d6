/** Test support: batch jobs written straight into the store, in the state a test starts from, and a canary job to wait for. */
import { Collections, type StoredBatchJob } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { batchJobRepository } from '../engine/jobs/batch/repository.js'
import { HR } from './tenant.js'
import { waitUntil } from './wait.js'

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

/**
 * Waits until a batch worker has looked for jobs due at `now`: the sign that whatever has not run by
 * then is not due, with no fixed wait. It enqueues a job of the canary's kind for no instance, due
 * then, and waits until it ran (its handler finds nothing to do and is done at once).
 */
export async function batchWorkerCaughtUp(
  store: Store,
  now: Date,
  canary: { kind: StoredBatchJob['kind']; payload: Record<string, unknown> },
): Promise<void> {
  const job = await batchJobRepository(store).enqueue({ ...canary, ...HR, dueAt: now }, now)
  const ran = await waitUntil(
    () => store.collection<StoredBatchJob>(Collections.batchJobs).findOne({ jobId: job!.jobId }),
    (stored) => stored?.status === 'done',
    10_000,
  )
  if (ran?.status !== 'done') throw new Error(`no batch worker ran a job due at ${now.toISOString()}: ${JSON.stringify(ran)}`)
}
