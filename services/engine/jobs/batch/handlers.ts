/**
 * What the batch worker runs: one async handler per job kind. The worker owns claims, leases,
 * retries and retention; a handler only does the work and throws when it could not.
 */
import type { FastifyBaseLogger } from 'fastify'
import { isServiceError } from '../../../../plugins/errors/service-error.js'
import type { StoredBatchJob } from '../../../../store/collections.js'

export type BatchJobKind = StoredBatchJob['kind']

/** A claimed job as the worker hands it over (`_id` is always set on a stored document). */
export type ClaimedBatchJob = StoredBatchJob & { _id: NonNullable<StoredBatchJob['_id']> }

export interface BatchJobContext {
  /** The worker's clock at the start of the run. */
  now: Date
  log: FastifyBaseLogger
}

export type BatchJobHandler = (job: ClaimedBatchJob, context: BatchJobContext) => Promise<void>

/** The handlers of one engine, by kind; jobs of a kind without a handler are left to other engines. */
export type BatchJobHandlers = Map<BatchJobKind, BatchJobHandler>

/**
 * A failure no retry can cure (an invalid payload or model, a request the engine refuses with a
 * 4xx): the job goes to `failed` at once instead of retrying until its tenth try. The retry endpoint
 * can still requeue it once the cause is fixed.
 */
export class PermanentJobError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.name = 'PermanentJobError'
  }
}

/**
 * Not a failure: the job cannot run yet and waits until `until` (an escalation of a suspended
 * instance). The try is not counted, so a job may wait any number of times.
 */
export class JobDeferral extends Error {
  constructor(
    readonly until: Date,
    reason: string,
  ) {
    super(reason)
    this.name = 'JobDeferral'
  }
}

/** True for failures that would fail the same way on every retry. */
export function isPermanentFailure(error: unknown): boolean {
  if (error instanceof PermanentJobError) return true
  return isServiceError(error) && error.statusCode >= 400 && error.statusCode < 500
}

export function errorMessage(error: unknown): string {
  if (isServiceError(error)) return `${error.code}: ${error.message}`
  return error instanceof Error ? error.message : String(error)
}
