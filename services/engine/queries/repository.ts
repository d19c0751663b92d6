/**
 * Reporting reads over the `contexts` collection. Each filter pins `processId` and `appId`: the
 * running instances are served by this repository's `processStatus, processId, appId` index, the
 * date range by `engine_updated_between`; reads fetch only the fields the answer needs.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Filter, Projection, Store } from '../../../store/port.js'
import { Collections, ENDED_STATUSES, type StoredContext } from '../../../store/collections.js'
import { fromPosition, type PagePosition } from './paging.js'

declare module 'fastify' {
  interface FastifyInstance {
    processQueries: ProcessQueryRepository
  }
}

/** What the summaries are built from. */
export type InstanceSummary = Pick<StoredContext, '_id' | 'processId' | 'businessKey' | 'processStatus' | 'lastUpdate'> & {
  processInstance: Pick<StoredContext['processInstance'], 'processStart'>
}

type StoredTask = StoredContext['processInstance']['tasks'][number]
/** The fields of a task a running instance's summary lists (and its status, to list only the open ones). */
export type TaskSummary = Pick<StoredTask, 'taskId' | 'stepId' | 'name' | 'status' | 'userId' | 'swimlane'>

/** A running instance's summary: its tasks too. */
export type RunningSummary = InstanceSummary & {
  processInstance: Pick<StoredContext['processInstance'], 'processStart'> & { tasks: TaskSummary[] }
}

/** What the overdue tasks are read from. */
export type OverdueSummary = Pick<StoredContext, '_id' | 'processId' | 'businessKey'> & {
  processInstance: Pick<StoredContext['processInstance'], 'tasks'>
}

/** The first window of a paged read (before the present or the cursor), and how much longer each next one is. */
const FIRST_WINDOW_MS = 3_600_000
const WINDOW_GROWTH = 4
/** A window this long reaches back past any date an instance holds: the read after it has no lower bound. */
const LAST_WINDOW_MS = 100 * 365 * 86_400_000

const SUMMARY_FIELDS = { _id: 1, processId: 1, businessKey: 1, processStatus: 1, lastUpdate: 1, 'processInstance.processStart': 1 } as const
/**
 * A running instance's tasks, only the fields its summary lists: a large answer (10,000 running
 * instances) copies these out of the store rather than every task whole, forms and dates included.
 */
const TASK_SUMMARY_FIELDS = Object.fromEntries(
  (['taskId', 'stepId', 'name', 'status', 'userId', 'swimlane'] satisfies Array<keyof TaskSummary>).map((field) => [
    `processInstance.tasks.${field}`,
    1,
  ]),
)

export class ProcessQueryRepository {
  constructor(private readonly collection: Collection<StoredContext>) {}

  /**
   * Running instances are few among all: the three pinned fields let the embedded store (which plans
   * on an equality prefix of an index's fields, then a range on the next) read only those; on MongoDB
   * it serves the same equality. The date range is read from `processId, appId, lastUpdate`.
   */
  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ processStatus: 1, processId: 1, appId: 1 }, { name: 'engine_running_instances' })
    // The updated-between query: the tenant's instances of a process by last update, and every other
    // field its summaries hold, `_id` included, so that an administrator's read over ended instances
    // (any number of them: it is not paged) is answered from the index entries alone on either store
    // (covered reads, docs/performance.md#covered-reads).
    const summary = { businessKey: 1, processStatus: 1, 'processInstance.processStart': 1, _id: 1 } as const
    await this.collection.createIndex(
      { processId: 1, appId: 1, organizationId: 1, lastUpdate: -1, ...summary },
      { name: 'engine_updated_between' },
    )
    // The paged queries (docs/reference/queries.md#what-they-read): the tenant's equality fields, then
    // the date they page by and `_id`, so a page is a range of one index on either store.
    const tenant = { organizationId: 1, appId: 1 } as const
    const started = { startedAt: -1, _id: -1 } as const
    await this.collection.createIndex({ ...tenant, inbox: 1, newestOpenTaskAt: -1, _id: -1 }, { name: 'engine_task_inbox' })
    await this.collection.createIndex({ ...tenant, ...started }, { name: 'engine_instances_by_start' })
    await this.collection.createIndex({ ...tenant, processId: 1, ...started }, { name: 'engine_instances_of_process' })
    await this.collection.createIndex({ ...tenant, processStatus: 1, ...started }, { name: 'engine_instances_by_status' })
    await this.collection.createIndex({ ...tenant, hasIncident: 1, ...started }, { name: 'engine_instances_by_incident' })
    await this.collection.createIndex({ ...tenant, businessKey: 1 }, { name: 'engine_instances_by_key' })
    await this.collection.createIndex({ ...tenant, viewers: 1, ...started }, { name: 'engine_instances_by_viewer' })
    await this.collection.createIndex({ ...tenant, newestIncidentAt: -1, _id: -1 }, { name: 'engine_incidents' })
  }

  /**
   * The instances `filter` selects (it pins the tenant), in the order by `field` then `_id`, newest
   * first, from `position` on; `limit` at most, with the fields `projection` names.
   *
   * Read window by window back in time from the position (or `anchor`, the present), each window
   * four times as long as the one before, until the page is full or the windows reach `floor` (or
   * back a century, then the rest): the embedded store sorts what a filter's index range yields
   * before it limits, so an unbounded read would go through every instance of the tenant for the
   * first page. A window is a range of `field` after the query's equality fields, which the
   * queries' indexes cover on either store.
   */
  async page(
    filter: Filter,
    field: 'startedAt' | 'newestOpenTaskAt' | 'newestIncidentAt',
    position: PagePosition | undefined,
    limit: number,
    projection: Projection,
    { anchor, floor }: { anchor: Date; floor?: Date | undefined },
  ): Promise<StoredContext[]> {
    const found: StoredContext[] = []
    const clauses = [...((filter.$and as Filter[] | undefined) ?? []), ...fromPosition(field, position)]
    const start = (position?.instanceAt ?? anchor).getTime()
    // The upper bound of the next window: the position's (inclusive) for the first, then the lower one of the window before.
    let upper: Filter = position ? { $lte: position.instanceAt } : {}
    for (let span = FIRST_WINDOW_MS; ; span *= WINDOW_GROWTH) {
      let lower = span >= LAST_WINDOW_MS ? floor : new Date(start - span)
      if (floor && lower && lower < floor) lower = floor
      const window = { ...(lower ? { $gte: lower } : {}), ...upper }
      const bounded = Object.keys(window).length === 0 ? clauses : [...clauses, { [field]: window }]
      const query = bounded.length === 0 ? filter : { ...filter, $and: bounded }
      const sort = { [field]: -1, _id: -1 } as const
      found.push(...(await this.collection.find(query, { sort, limit: limit - found.length, projection }).toArray()))
      if (found.length >= limit || !lower || (floor && lower <= floor)) return found
      upper = { $lt: lower }
    }
  }

  /** Running instances of the process among those `visible` selects, newest update first, with their tasks. */
  async running(appId: string, processId: string, visible: Filter): Promise<RunningSummary[]> {
    const filter = { processId, processStatus: 'running', appId, ...visible }
    return (await this.collection
      .find(filter, { sort: { lastUpdate: -1 }, projection: { ...SUMMARY_FIELDS, ...TASK_SUMMARY_FIELDS } })
      .toArray()) as RunningSummary[]
  }

  /**
   * Instances of the process updated within [from, to] among those `visible` selects (on top-level
   * fields, pinning the tenant: visibleContextsFilter), newest update first.
   */
  async updatedBetween(processId: string, from: Date, to: Date, visible: Filter): Promise<InstanceSummary[]> {
    const filter = { processId, lastUpdate: { $gte: from, $lte: to }, ...visible }
    return (await this.collection.find(filter, { sort: { lastUpdate: -1 }, projection: SUMMARY_FIELDS }).toArray()) as InstanceSummary[]
  }

  /**
   * Instances of the app (of the process, when given) with an open task due by `now`, among those
   * `visible` selects: read from ContextRepository's `appId, nextDueAt` index. Only unfinished
   * instances have open tasks: saying so keeps the read off the embedded store's cold tier, which
   * holds no entries of that index (store/collections.ts).
   */
  async overdue(appId: string, processId: string | undefined, now: Date, visible: Filter): Promise<OverdueSummary[]> {
    const filter = {
      appId,
      nextDueAt: { $lte: now },
      processStatus: { $nin: ENDED_STATUSES },
      ...(processId === undefined ? {} : { processId }),
      ...visible,
    }
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
