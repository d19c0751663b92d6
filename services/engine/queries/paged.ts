/**
 * The paged queries a console is built on (docs/reference/queries.md#paged-queries): the caller's
 * open tasks, the tenant's instances, and its incidents. Each reads one index of the `contexts`
 * collection, window by window (ProcessQueryRepository.page), with the tenant and the caller's
 * visibility in the store filter, so a page reads about as many instances as it answers.
 */
import type {
  Incident,
  IncidentPage,
  IncidentsQuery,
  InstanceSummary,
  InstanceSummaryPage,
  InstancesQuery,
  MyTask,
  MyTaskPage,
  MyTasksQuery,
} from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { ENDED_STATUSES, type StoredContext } from '../../../store/collections.js'
import { failedAtOf, inboxKeyOf, swimlaneInboxKey, userInboxKey } from '../../../store/context-fields.js'
import type { Filter } from '../../../store/port.js'
import type { Authorization } from '../instances/authorization.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import { DEFAULT_PAGE_SIZE, decodePosition, encodePosition, instancesToRead, type Keyed, pageOf, type PagePosition } from './paging.js'
import type { ProcessQueryRepository } from './repository.js'

export interface PagedQueryDependencies {
  queries: ProcessQueryRepository
  locks: TaskLockRepository
  authorization: Authorization
  fail: ErrorFactory<EngineErrorCode>
  now: () => Date
}

interface PageRequest {
  cursor?: string
  limit?: number
  appId?: string
}

/** The instance fields every paged query answers from. */
const INSTANCE_FIELDS = {
  _id: 1,
  processId: 1,
  businessKey: 1,
  processStatus: 1,
  lastUpdate: 1,
  startedAt: 1,
  newestOpenTaskAt: 1,
  newestIncidentAt: 1,
  openTaskCount: 1,
  hasIncident: 1,
} as const

const EMPTY = { items: [], nextCursor: null }

/**
 * The strings that start with `prefix`: the range from it to the prefix whose last character is the
 * next one (which an index bounds, on either store; the next character, as it orders the same way
 * in UTF-8 and UTF-16), and an anchored expression of the escaped prefix, exact whatever the order.
 */
function prefixRange(prefix: string): Filter {
  const exact = { $regex: `^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}` }
  const characters = [...prefix]
  while (characters.length > 0) {
    const last = (characters.pop() as string).codePointAt(0) as number
    if (last >= 0x10ffff) continue
    // After the last character below the surrogates comes the first one above them.
    const next = last + 1 === 0xd800 ? 0xe000 : last + 1
    return { $gte: prefix, $lt: characters.join('') + String.fromCodePoint(next), ...exact }
  }
  return { $gte: prefix, ...exact }
}

function requiredDate(value: Date | null | undefined): Date {
  return value instanceof Date ? value : new Date(0)
}

export class PagedQueryService {
  constructor(private readonly deps: PagedQueryDependencies) {}

  /** The open tasks assigned to the caller or waiting in the pool of one of the caller's swimlanes. */
  async myTasks(actor: Actor, body: MyTasksQuery): Promise<MyTaskPage> {
    const position = this.position(body)
    if (!this.inScope(actor, body)) return EMPTY
    const inboxes = this.inboxesOf(actor, body)
    if (inboxes.length === 0) return EMPTY
    // Only unfinished instances have open tasks: saying so keeps the read off the embedded store's
    // cold tier, which holds no entries of the inbox's index (store/collections.ts).
    const filter: Filter = {
      ...this.tenantOf(actor),
      inbox: inboxes.length === 1 ? inboxes[0] : { $in: inboxes },
      processStatus: { $nin: ENDED_STATUSES },
      ...(body.processId === undefined ? {} : { processId: body.processId }),
    }
    const limit = body.limit ?? DEFAULT_PAGE_SIZE
    const projection = { ...INSTANCE_FIELDS, 'processInstance.tasks': 1 } as const
    const instances = await this.deps.queries.page(filter, 'newestOpenTaskAt', position, instancesToRead(limit), projection, {
      anchor: this.deps.now(),
    })
    const wanted = new Set(inboxes)
    const page = pageOf(
      instances,
      (stored) => requiredDate(stored.newestOpenTaskAt),
      (stored) =>
        stored.processInstance.tasks
          .filter((task) => task.status === 'open' && wanted.has(inboxKeyOf(task)))
          .map((task): Keyed<MyTask> => ({
            key: task.createdAt,
            id: task.taskId,
            item: {
              processInstanceId: stored._id,
              processId: stored.processId,
              businessKey: stored.businessKey,
              taskId: task.taskId,
              stepId: task.stepId,
              name: task.name,
              swimlane: task.swimlane,
              ...(task.userId ? { userId: task.userId } : {}),
              createdAt: task.createdAt,
              dueDate: task.dueDate ?? null,
              lock: null,
            },
          })),
      position,
      limit,
    )
    const locks = await this.deps.locks.holdersOf(
      page.items.map((task) => task.taskId),
      this.deps.now(),
    )
    const lockOf = new Map(locks.map((lock) => [lock._id, { userId: lock.userId, expiresAt: new Date(lock.expiresAt).toISOString() }]))
    const items = page.items.map((task) => ({ ...task, lock: lockOf.get(task.taskId) ?? null }))
    return { items, nextCursor: page.next ? encodePosition(page.next) : null }
  }

  /** Summaries of the tenant's instances the caller may see, newest start first. */
  async instances(actor: Actor, body: InstancesQuery): Promise<InstanceSummaryPage> {
    const position = this.position(body)
    const started = this.startedRange(body)
    if (!this.inScope(actor, body)) return EMPTY
    const filter: Filter = {
      ...(body.processId === undefined ? {} : { processId: body.processId }),
      ...(body.status === undefined ? {} : { processStatus: body.status }),
      ...(body.businessKey === undefined ? {} : { businessKey: prefixRange(body.businessKey) }),
      ...(started === undefined ? {} : { startedAt: started }),
      ...(body.hasIncident === undefined ? {} : { hasIncident: body.hasIncident }),
      ...this.deps.authorization.visibleContextsFilter(actor),
    }
    const limit = body.limit ?? DEFAULT_PAGE_SIZE
    const projection = {
      ...INSTANCE_FIELDS,
      initiator: 1,
      'processInstance.processName': 1,
      'processInstance.modelVersion': 1,
      'processInstance.processStart': 1,
      'processInstance.lastUpdate': 1,
    } as const
    const instances = await this.deps.queries.page(filter, 'startedAt', position, instancesToRead(limit), projection, {
      anchor: this.deps.now(),
      floor: started?.$gte as Date | undefined,
    })
    const page = pageOf(
      instances,
      (stored) => requiredDate(stored.startedAt),
      (stored): Array<Keyed<InstanceSummary>> => [{ key: '', id: '', item: instanceSummary(stored) }],
      position,
      limit,
    )
    return { items: page.items, nextCursor: page.next ? encodePosition(page.next) : null }
  }

  /** The failed threads of the tenant's instances, newest failure first: admins and system users only. */
  async incidents(actor: Actor, body: IncidentsQuery): Promise<IncidentPage> {
    this.deps.authorization.assertMayActForOthers(actor, 'list the incidents')
    const position = this.position(body)
    if (!this.inScope(actor, body)) return EMPTY
    const filter: Filter = {
      ...this.tenantOf(actor),
      // Dates only: instances without an incident hold null there, which no date range matches.
      newestIncidentAt: { $gte: new Date(0) },
      // An ending marks every thread done (runtime/interpreter.ts `endProcess`): only unfinished
      // instances have incidents, and the embedded store's cold tier holds no entries of this index.
      processStatus: { $nin: ENDED_STATUSES },
      ...(body.processId === undefined ? {} : { processId: body.processId }),
    }
    const limit = body.limit ?? DEFAULT_PAGE_SIZE
    const projection = { ...INSTANCE_FIELDS, 'processInstance.threads': 1, 'processInstance.lastUpdate': 1 } as const
    const instances = await this.deps.queries.page(filter, 'newestIncidentAt', position, instancesToRead(limit), projection, {
      anchor: this.deps.now(),
    })
    const page = pageOf(
      instances,
      (stored) => requiredDate(stored.newestIncidentAt),
      (stored) =>
        stored.processInstance.threads
          .filter((thread) => thread.status === 'failed')
          .map((thread): Keyed<Incident> => {
            const failedAt = failedAtOf(thread, stored.processInstance)
            return {
              key: failedAt,
              id: thread.threadId,
              item: {
                processInstanceId: stored._id,
                processId: stored.processId,
                businessKey: stored.businessKey,
                processStatus: stored.processStatus,
                threadId: thread.threadId,
                stepId: thread.stepId,
                errorCode: thread.error?.code ?? null,
                message: thread.error?.message ?? '',
                failedAt,
                retries: thread.retries ?? 0,
              },
            }
          }),
      position,
      limit,
    )
    return { items: page.items, nextCursor: page.next ? encodePosition(page.next) : null }
  }

  /** The inboxes a my-tasks request reads: the caller's own, and/or the pools of the caller's swimlanes it names. */
  private inboxesOf(actor: Actor, body: MyTasksQuery): string[] {
    const own = body.swimlane === undefined ? [userInboxKey(actor.userId)] : []
    if (body.assignedToMe === true) return own
    const swimlanes = body.swimlane === undefined ? actor.swimlanes : actor.swimlanes.filter((swimlane) => swimlane === body.swimlane)
    return [...own, ...swimlanes.map(swimlaneInboxKey)]
  }

  private tenantOf(actor: Actor): Filter {
    return { organizationId: actor.organizationId, appId: actor.appId }
  }

  /** A request that names another app than the user's covers nothing. */
  private inScope(actor: Actor, body: PageRequest): boolean {
    return body.appId === undefined || body.appId === actor.appId
  }

  /** The request's cursor decoded; 400 when it is not one this engine issued. */
  private position(body: PageRequest): PagePosition | undefined {
    if (body.cursor === undefined) return undefined
    const position = decodePosition(body.cursor)
    if (!position)
      throw this.deps.fail('wm4000', { args: ['body.cursor is not a cursor this service issued'], parameters: { field: 'body.cursor' } })
    return position
  }

  /** The range of `startedAt` the request asks for; 400 when it is empty by its bounds' order. */
  private startedRange(body: InstancesQuery): Filter | undefined {
    const after = body.startedAfter === undefined ? undefined : new Date(body.startedAfter)
    const before = body.startedBefore === undefined ? undefined : new Date(body.startedBefore)
    for (const [field, date] of [
      ['body.startedAfter', after],
      ['body.startedBefore', before],
    ] as const) {
      if (date && Number.isNaN(date.getTime()))
        throw this.deps.fail('wm4000', { args: [`${field} is not a date-time`], parameters: { field } })
    }
    if (after && before && after > before)
      throw this.deps.fail('wm4000', {
        args: [`body.startedAfter (${body.startedAfter}) is after body.startedBefore (${body.startedBefore})`],
        parameters: { field: 'body.startedAfter' },
      })
    if (!after && !before) return undefined
    return { ...(after ? { $gte: after } : {}), ...(before ? { $lte: before } : {}) }
  }
}

function instanceSummary(stored: StoredContext): InstanceSummary {
  const instance = stored.processInstance
  return {
    processInstanceId: stored._id,
    processId: stored.processId,
    processName: instance.processName,
    modelVersion: instance.modelVersion,
    businessKey: stored.businessKey,
    processStatus: stored.processStatus,
    processStart: instance.processStart,
    lastUpdate: instance.lastUpdate,
    initiator: stored.initiator,
    openTaskCount: stored.openTaskCount ?? 0,
    hasIncident: stored.hasIncident ?? false,
  }
}
