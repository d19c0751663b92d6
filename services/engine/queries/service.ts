/**
 * The reporting queries (docs/reference/queries.md): running instances of a process, instances updated
 * between two dates, and context plus activity of given instances. They cover the user's tenant
 * and, of it, the instances the user is authorized on (everything for `admin`); a request naming
 * another app gets nothing.
 */
import type {
  ActiveProcessIdsQuery,
  ActiveProcessInfo,
  ContextAndActivity,
  ContextAndActivityQuery,
  OverdueTask,
  OverdueTasksQuery,
  ProcessInfo,
  UpdatedBetweenQuery,
} from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { ActivityRepository } from '../instances/activities.js'
import { visibleContextsFilter, visibleInstancesFilter } from '../instances/authorization.js'
import { contractInstance } from '../tasks/session.js'
import type { InstanceSummary, OverdueSummary, ProcessQueryRepository, RunningSummary, TaskSummary } from './repository.js'

export interface QueryServiceDependencies {
  queries: ProcessQueryRepository
  activities: ActivityRepository
  fail: ErrorFactory<EngineErrorCode>
  /** The clock (`date2` defaults to now), so tests control it. */
  now?: () => Date
}

function processInfo(summary: InstanceSummary): ProcessInfo {
  return {
    processInstanceId: summary._id,
    processId: summary.processId,
    businessKey: summary.businessKey,
    processStatus: summary.processStatus,
    processStart: summary.processInstance.processStart,
    lastUpdate: summary.lastUpdate.toISOString(),
  }
}

type ActiveTask = ActiveProcessInfo['tasks'][number]

/** An open task as the answer lists it. Built as one literal (no spreads): answers list 10,000 of them. */
function activeTask({ taskId, stepId, name, userId, swimlane }: TaskSummary): ActiveTask {
  const task: ActiveTask = { taskId, stepId, name, swimlane }
  if (userId) task.userId = userId
  return task
}

function activeProcessInfo(summary: RunningSummary): ActiveProcessInfo {
  const tasks: ActiveTask[] = []
  for (const task of summary.processInstance.tasks) if (task.status === 'open') tasks.push(activeTask(task))
  return { ...processInfo(summary), tasks }
}

/** The open tasks of an instance whose due date is at or before `now`. */
function overdueTasksOf(summary: OverdueSummary, now: string): OverdueTask[] {
  return summary.processInstance.tasks
    .filter((task) => task.status === 'open' && task.dueDate !== undefined && task.dueDate <= now)
    .map(({ taskId, stepId, name, dueDate, userId, swimlane }) => ({
      processInstanceId: summary._id,
      businessKey: summary.businessKey,
      processId: summary.processId,
      taskId,
      stepId,
      name,
      dueDate: dueDate as string,
      ...(userId ? { userId } : {}),
      swimlane,
    }))
}

function parseDate(fail: ErrorFactory<EngineErrorCode>, text: string, field: string): Date {
  const date = new Date(text)
  if (Number.isNaN(date.getTime())) throw fail('wm4000', { args: [`${field} is not a date-time: ${text}`], parameters: { field } })
  return date
}

export class QueryService {
  private readonly now: () => Date

  constructor(private readonly deps: QueryServiceDependencies) {
    this.now = deps.now ?? (() => new Date())
  }

  async activeProcesses(actor: Actor, body: ActiveProcessIdsQuery): Promise<ActiveProcessInfo[]> {
    if (!this.inScope(actor, body.appId)) return []
    return (await this.deps.queries.running(actor.appId, body.processId, visibleInstancesFilter(actor))).map(activeProcessInfo)
  }

  async updatedBetween(actor: Actor, body: UpdatedBetweenQuery): Promise<ProcessInfo[]> {
    const from = parseDate(this.deps.fail, body.date1, 'body.date1')
    const to = body.date2 === undefined ? this.now() : parseDate(this.deps.fail, body.date2, 'body.date2')
    if (from > to)
      throw this.deps.fail('wm4000', {
        args: [`body.date1 (${body.date1}) is after body.date2 (${to.toISOString()})`],
        parameters: { field: 'body.date1' },
      })
    if (!this.inScope(actor, body.appId)) return []
    return (await this.deps.queries.updatedBetween(body.processId, from, to, visibleContextsFilter(actor))).map(processInfo)
  }

  /** The open tasks past their due date of the instances the user may see, oldest due first. */
  async overdueTasks(actor: Actor, body: OverdueTasksQuery): Promise<OverdueTask[]> {
    if (!this.inScope(actor, body.appId)) return []
    const now = this.now()
    const instances = await this.deps.queries.overdue(actor.appId, body.processId, now, visibleInstancesFilter(actor))
    const tasks = instances.flatMap((summary) => overdueTasksOf(summary, now.toISOString()))
    // Due dates are ISO strings of one format (UTC, milliseconds): they sort as text.
    return tasks.sort((a, b) => (a.dueDate < b.dueDate ? -1 : a.dueDate > b.dueDate ? 1 : 0))
  }

  /** One entry per requested instance, in request order; `context` null for one not found, not visible or of another key. */
  async contextAndActivity(actor: Actor, body: ContextAndActivityQuery): Promise<ContextAndActivity[]> {
    const ids = body.processInstances.map((entry) => entry.processInstanceId)
    const found = this.inScope(actor, body.appId)
      ? await this.deps.queries.byIds(actor.appId, body.processId, ids, visibleInstancesFilter(actor))
      : []
    const byId = new Map(found.map((stored) => [stored._id, stored]))
    return Promise.all(
      body.processInstances.map(async ({ processInstanceId, businessKey }) => {
        const stored = byId.get(processInstanceId)
        if (!stored || stored.businessKey !== businessKey) return { processInstanceId, businessKey, context: null, activity: [] }
        return {
          processInstanceId,
          businessKey,
          context: { dataInstance: stored.dataInstance, processInstance: contractInstance(stored.processInstance) },
          activity: await this.deps.activities.listFor(processInstanceId, stored.activityLog),
        }
      }),
    )
  }

  /** A request that names another app than the user's covers nothing. */
  private inScope(actor: Actor, appId: string | undefined): boolean {
    return appId === undefined || appId === actor.appId
  }
}
