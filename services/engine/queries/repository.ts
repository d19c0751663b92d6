/**
 * Reporting reads over the `contexts` collection. Each filter pins `processId` and `appId`: the
 * running instances are served by this repository's `processStatus, processId, appId` index, the
 * date range by ContextRepository's `processId, appId, lastUpdate`; reads fetch only the fields the
 * answer needs.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Filter, Store } from '../../../store/port.js'
import { Collections, type StoredContext } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    processQueries: ProcessQueryRepository
  }
}

/** What the summaries are built from. */
export type InstanceSummary = Pick<StoredContext, '_id' | 'processId' | 'businessKey' | 'processStatus' | 'lastUpdate'> & {
  processInstance: Pick<StoredContext['processInstance'], 'processStart' | 'tasks'>
}

/** What the overdue tasks are read from. */
export type OverdueSummary = Pick<StoredContext, '_id' | 'processId' | 'businessKey'> & {
  processInstance: Pick<StoredContext['processInstance'], 'tasks'>
}

const SUMMARY_FIELDS = { _id: 1, processId: 1, businessKey: 1, processStatus: 1, lastUpdate: 1, 'processInstance.processStart': 1 } as const

export class ProcessQueryRepository {
  constructor(private readonly collection: Collection<StoredContext>) {}

  /**
   * Running instances are few among all: the three pinned fields let the embedded store (which plans
   * on an equality prefix of an index's fields, then a range on the next) read only those; on MongoDB
   * it serves the same equality. The date range is read from `processId, appId, lastUpdate`.
   */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ processStatus: 1, processId: 1, appId: 1 }, { name: 'engine_running_instances' })
  }

  /** Running instances of the process among those `visible` selects, newest update first, with their tasks. */
  async running(appId: string, processId: string, visible: Filter): Promise<InstanceSummary[]> {
    const filter = { processId, processStatus: 'running', appId, ...visible }
    return (await this.collection
      .find(filter, { sort: { lastUpdate: -1 }, projection: { ...SUMMARY_FIELDS, 'processInstance.tasks': 1 } })
      .toArray()) as InstanceSummary[]
  }

  /** Instances of the process updated within [from, to], newest update first. */
  async updatedBetween(appId: string, processId: string, from: Date, to: Date, visible: Filter): Promise<InstanceSummary[]> {
    const filter = { processId, appId, lastUpdate: { $gte: from, $lte: to }, ...visible }
    return (await this.collection.find(filter, { sort: { lastUpdate: -1 }, projection: SUMMARY_FIELDS }).toArray()) as InstanceSummary[]
  }

  /**
   * Instances of the app (of the process, when given) with an open task due by `now`, among those
   * `visible` selects: read from ContextRepository's `appId, nextDueAt` index.
   */
  async overdue(appId: string, processId: string | undefined, now: Date, visible: Filter): Promise<OverdueSummary[]> {
    const filter = { appId, nextDueAt: { $lte: now }, ...(processId === undefined ? {} : { processId }), ...visible }
    const projection = { _id: 1, processId: 1, businessKey: 1, 'processInstance.tasks': 1 } as const
    return (await this.collection.find(filter, { sort: { nextDueAt: 1 }, projection }).toArray()) as OverdueSummary[]
  }

  /** The given instances of the process among those `visible` selects. */
  async byIds(appId: string, processId: string, processInstanceIds: readonly string[], visible: Filter): Promise<StoredContext[]> {
    return this.collection.find({ _id: { $in: [...processInstanceIds] }, processId, appId, ...visible }).toArray()
  }
}

export function processQueryRepository(store: Store): ProcessQueryRepository {
  return new ProcessQueryRepository(store.collection<StoredContext>(Collections.contexts))
}

export default repositoryPlugin('processQueries', ({ store }) => processQueryRepository(store), {
  name: 'process-queries-repository',
  dependencies: ['contexts-repository'],
})
