/**
 * Removing ended instances for good (docs/reference/lifecycle.md#purging-ended-instances): by an
 * admin's request (`POST /external/process/purge`, one instance or a filter, `dryRun`), and in the
 * background after HISTORY_RETENTION_DAYS (history-retention.ts). An instance goes with everything
 * kept for it: its context, activities, notification record and task locks in one atomic write,
 * then its files' bytes. Only `completed` and `cancelled` instances are removed: they never change
 * status again, so what was read as ended is still ended when it is removed.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { PurgeRequest, PurgeResult } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { EngineMetrics } from '../../../lib/telemetry/engine-metrics.js'
import { type AtomicWrite, type Filter, type Store } from '../../../store/port.js'
import { Collections, ENDED_STATUSES, type StoredContext } from '../../../store/collections.js'
import { tenantFilter } from '../../../store/tenant.js'
import type { Authorization } from '../instances/authorization.js'

/** The most instances one request removes. */
const DEFAULT_LIMIT = 1000

/** Why instances were removed, the label of the purge metric. */
export type PurgeReason = 'request' | 'retention'

/** An ended instance as the purge reads it: its id and where its files' bytes are. */
type EndedInstance = Pick<StoredContext, '_id'> & { processInstance: { files?: Array<{ storageHandle: string }> } }

export interface PurgeDependencies {
  store: Store
  authorization: Authorization
  fail: ErrorFactory<EngineErrorCode>
  log: FastifyBaseLogger
  metrics: EngineMetrics | null
}

/** The store filter of the ended instances a purge filter matches, in one tenant or (retention) all. */
export function endedFilter(filter: { endedBefore: Date; processId?: string; processStatus?: string }, tenant?: Filter): Filter {
  return {
    ...tenant,
    ...(filter.processId === undefined ? {} : { processId: filter.processId }),
    processStatus: filter.processStatus ?? { $in: [...ENDED_STATUSES] },
    lastUpdate: { $lt: filter.endedBefore },
  }
}

/** Everything kept for one instance, removed in one atomic write. */
function purgeWrites(processInstanceId: string): AtomicWrite[] {
  return [
    { collection: Collections.contexts, kind: 'deleteMany', filter: { _id: processInstanceId } },
    { collection: Collections.activities, kind: 'deleteMany', filter: { processInstanceId } },
    { collection: Collections.notifications, kind: 'deleteMany', filter: { _id: processInstanceId } },
    { collection: Collections.taskLocks, kind: 'deleteMany', filter: { processInstanceId } },
    { collection: Collections.externalTasks, kind: 'deleteMany', filter: { processInstanceId } },
  ]
}

export class InstancePurge {
  constructor(private readonly deps: PurgeDependencies) {}

  /** `POST /external/process/purge`: the caller is checked to act for others, then one instance or a filter's. */
  async request(actor: Actor, body: PurgeRequest): Promise<PurgeResult> {
    this.deps.authorization.assertMayActForOthers(actor, 'purge process instances')
    const dryRun = body.dryRun === true
    if ((body.processInstanceId === undefined) === (body.filter === undefined))
      throw this.deps.fail('wm4000', { args: ['give either processInstanceId or filter'], parameters: { field: 'body' } })
    const tenant = tenantFilter(actor)
    if (body.processInstanceId !== undefined) {
      const instance = await this.endedInstance(body.processInstanceId, tenant)
      if (!dryRun) await this.purge([instance], 'request')
      return { purged: 1, processInstanceIds: [instance._id], more: false, dryRun }
    }
    const { endedBefore, processId, processStatus } = body.filter as NonNullable<PurgeRequest['filter']>
    const limit = body.limit ?? DEFAULT_LIMIT
    const found = await this.ended(endedFilter({ endedBefore: new Date(endedBefore), processId, processStatus }, tenant), limit + 1)
    const chosen = found.slice(0, limit)
    if (!dryRun) await this.purge(chosen, 'request')
    return { purged: chosen.length, processInstanceIds: chosen.map((instance) => instance._id), more: found.length > limit, dryRun }
  }

  /**
   * The ended instances `filter` matches, at most `limit`; `oldestFirst` sorts them by their last
   * change (what a request answers), which the retention job does not need.
   */
  ended(filter: Filter, limit: number, oldestFirst = true): Promise<EndedInstance[]> {
    const projection = { _id: 1, 'processInstance.files': 1 } as const
    return this.deps.store
      .collection<StoredContext>(Collections.contexts)
      .find(filter, { ...(oldestFirst ? { sort: { lastUpdate: 1 } } : {}), limit, projection })
      .toArray()
  }

  /**
   * Removes each instance in its own atomic write, then its files' bytes (bytes of a file whose
   * instance is gone are never read again; an instance is never left pointing at missing bytes).
   */
  async purge(instances: readonly EndedInstance[], reason: PurgeReason): Promise<void> {
    for (const instance of instances) {
      await this.deps.store.applyAtomically(purgeWrites(instance._id))
      for (const file of instance.processInstance.files ?? []) {
        await this.deps.store.files.delete(file.storageHandle).catch((error: unknown) => {
          this.deps.log.warn({ err: error, processInstanceId: instance._id }, "a purged instance's file could not be removed")
        })
      }
    }
    if (instances.length > 0) this.deps.metrics?.instancesPurged(reason, instances.length)
  }

  /** The instance of the tenant (404 wm3001 otherwise), ended (409 wm3141 otherwise). */
  private async endedInstance(processInstanceId: string, tenant: Filter): Promise<EndedInstance> {
    const stored = await this.deps.store
      .collection<StoredContext>(Collections.contexts)
      .findOne({ _id: processInstanceId, ...tenant }, { projection: { _id: 1, processStatus: 1, 'processInstance.files': 1 } })
    const notFound = { args: [processInstanceId], parameters: { field: 'body.processInstanceId' } }
    if (!stored) throw this.deps.fail('wm3001', notFound)
    if (!ENDED_STATUSES.includes(stored.processStatus))
      throw this.deps.fail('wm3141', {
        args: [processInstanceId, stored.processStatus, 'purged'],
        parameters: { field: 'body.processInstanceId' },
      })
    return stored
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    instancePurge: InstancePurge
  }
}

async function instancePurgePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate(
    'instancePurge',
    new InstancePurge({
      store: fastify.store,
      authorization: fastify.authorization,
      fail: fastify.fail,
      log: fastify.log,
      metrics: fastify.engineMetrics,
    }),
  )
}

export default fp(instancePurgePlugin, { name: 'instance-purge', dependencies: ['store', 'authorization', 'errors', 'metrics'] })
