/**
 * Bulk operations (docs/reference/lifecycle.md#bulk-operations): `POST /external/process/bulk` queues a `bulkOperation` batch job; the
 * batch worker runs it here. The job works through the matching instances of its tenant page by
 * page in `_id` order, each instance one commit of its own (process control's suspend / resume /
 * cancel, or the retry of each failed thread), and after every page keeps its `progress` and its
 * cursor on the job, so a job that an engine dropped mid-way goes on after the last page it kept
 * (an instance it had already changed counts as done, not as failed).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { BulkOperationRequest } from '../../../openapi/generated/schemas.js'
import { type Actor, findActor } from '../../../plugins/identity/actor.js'
import type { Filter, Store } from '../../../store/port.js'
import type { BulkProgress, StoredContext } from '../../../store/collections.js'
import { retryFailedThread } from '../tasks/actions.js'
import { mayActForOthers, sameTenant } from '../instances/authorization.js'
import { type BatchJobHandler, errorMessage, PermanentJobError } from '../jobs/batch/handlers.js'
import type { BatchJobRepository } from '../jobs/batch/repository.js'
import type { BatchWorker } from '../jobs/batch/worker.js'
import type { ProcessControl } from './control.js'
import type { ContextRepository } from '../instances/repository.js'
import type { InstanceDependencies } from '../instances/loaded-instance.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'

/** Instances read (and kept in memory) at a time. */
export const BULK_PAGE_SIZE = 250
/** Instances of a page changed at the same time: their commits overlap in the store's journal. */
export const BULK_CONCURRENCY = 16

export interface BulkPayload {
  operation: BulkOperationRequest['operation']
  filter: BulkOperationRequest['filter']
  reason?: string
  /** The admin who asked: the job acts as them, checked again when it runs. */
  requestedBy: string
}

/** The store filter of a bulk request within its tenant (`retry` works on failed instances only). */
export function bulkFilter(payload: BulkPayload, tenant: { appId: string; organizationId: string }): Filter {
  const { filter, operation } = payload
  const started: Record<string, string> = {}
  if (filter.startedAfter !== undefined) started.$gte = new Date(filter.startedAfter).toISOString()
  if (filter.startedBefore !== undefined) started.$lt = new Date(filter.startedBefore).toISOString()
  const status =
    operation === 'retry'
      ? filter.processStatus === undefined || filter.processStatus === 'failed'
        ? 'failed'
        : null
      : filter.processStatus
  return {
    appId: tenant.appId,
    organizationId: tenant.organizationId,
    processId: filter.processId,
    // A retry asked of instances of another status finds nothing to retry.
    ...(status === null ? { _id: { $in: [] } } : status === undefined ? {} : { processStatus: status }),
    ...(filter.businessKeys === undefined ? {} : { businessKey: { $in: filter.businessKeys } }),
    ...(Object.keys(started).length > 0 ? { 'processInstance.processStart': started } : {}),
  }
}

export interface BulkDependencies extends InstanceDependencies {
  store: Store
  contexts: ContextRepository
  control: ProcessControl
  batchJobs: BatchJobRepository
  worker: Pick<BatchWorker, 'owner'>
}

/** Runs `work` on every item, at most `limit` at a time. */
async function eachLimited<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0
  const lane = async (): Promise<void> => {
    while (next < items.length) await work(items[next++] as T)
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane))
}

export class BulkOperations {
  constructor(private readonly deps: BulkDependencies) {}

  /** Queues the job (the caller is an admin of the tenant, checked by the route). */
  async enqueue(actor: Actor, request: BulkOperationRequest, now: Date): Promise<{ jobId: string }> {
    const payload: BulkPayload = {
      operation: request.operation,
      filter: request.filter,
      requestedBy: actor.userId,
      ...(request.reason === undefined ? {} : { reason: request.reason }),
    }
    const job = await this.deps.batchJobs.enqueue(
      { kind: 'bulkOperation', appId: actor.appId, organizationId: actor.organizationId, payload: { ...payload }, dueAt: now },
      now,
    )
    if (!job) throw new Error('a bulk job without a schedule key cannot collide')
    return { jobId: job.jobId }
  }

  readonly handler: BatchJobHandler = async (job, context) => {
    const payload = job.payload as unknown as BulkPayload
    const tenant = { appId: job.appId, organizationId: job.organizationId ?? '' }
    const actor = await findActor(this.deps.store, payload.requestedBy)
    // The admin may have left the tenant or lost the role since: the job runs with today's rights.
    if (!actor || !sameTenant(actor, tenant) || !mayActForOthers(actor))
      throw new PermanentJobError(`${payload.requestedBy} may no longer run bulk operations in app ${tenant.appId}`)
    const filter = bulkFilter(payload, tenant)
    const { contexts, batchJobs, worker } = this.deps
    const progress: BulkProgress = job.progress ?? { total: await contexts.count(filter), done: 0, failed: [] }
    let cursor = job.cursor
    for (;;) {
      const page = await contexts.page(filter, cursor, BULK_PAGE_SIZE)
      if (page.length === 0) break
      await eachLimited(page, BULK_CONCURRENCY, async (stored) => {
        try {
          await this.applyOne(payload, actor, stored)
          progress.done++
        } catch (error) {
          progress.failed.push({ processInstanceId: stored._id, error: errorMessage(error) })
        }
      })
      cursor = (page[page.length - 1] as StoredContext)._id
      if (!(await batchJobs.recordProgress(job, worker.owner, progress, cursor, context.now)))
        throw new Error('the bulk job lost its lease; its new holder goes on')
    }
    // Instances that started to match after the count are worked on too: the total says what was done.
    progress.total = progress.done + progress.failed.length
    await batchJobs.recordProgress(job, worker.owner, progress, cursor, context.now)
    context.log.info({ operation: payload.operation, done: progress.done, failed: progress.failed.length }, 'bulk operation finished')
  }

  private async applyOne(payload: BulkPayload, actor: Actor, stored: StoredContext): Promise<void> {
    if (payload.operation !== 'retry') {
      // An instance already as asked (suspended before, or by this job's dropped run) counts as done.
      await this.deps.control.applyTo(payload.operation, actor, stored, { reason: payload.reason, appId: stored.appId }, true)
      return
    }
    // Each failed thread is retried on the instance as the previous retry left it.
    let current = stored
    for (const thread of stored.processInstance.threads.filter((candidate) => candidate.status === 'failed')) {
      current = (await retryFailedThread(this.deps, actor, current, thread.threadId, undefined)).committed
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    bulkOperations: BulkOperations
  }
}

async function bulkOperationsPlugin(fastify: FastifyInstance): Promise<void> {
  const bulk = new BulkOperations({
    ...engineDependencies(fastify),
    control: fastify.processControl,
    batchJobs: fastify.batchJobs,
    worker: fastify.batchWorker,
  })
  fastify.decorate('bulkOperations', bulk)
  fastify.batchHandlers.set('bulkOperation', bulk.handler)
}

export default fp(bulkOperationsPlugin, {
  name: 'bulk-operations',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'process-control', 'batch-jobs', 'batch-worker'],
})
