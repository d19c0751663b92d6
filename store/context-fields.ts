/**
 * The top-level fields of a stored process instance (`contexts`) that queries filter and sort on,
 * derived from its `processInstance` (docs/reference/queries.md#what-they-read). The engine writes
 * them with every change; the store migration (store/schema/query-fields.ts) derives them for
 * instances stored before a field existed. Kept here, beside the document shape, so both use one
 * derivation.
 */
import type { ProcessInstance, Task } from '../model/instance.js'
import type { StoredContext } from './collections.js'

/** Inbox key of the tasks assigned to a user. */
export function userInboxKey(userId: string): string {
  return `user:${userId}`
}

/** Inbox key of the unassigned tasks waiting in a swimlane's pool. */
export function swimlaneInboxKey(swimlane: string): string {
  return `swimlane:${swimlane}`
}

/** Whose inbox an open task is in: its assignee's, or while unassigned its swimlane's. */
export function inboxKeyOf(task: Pick<Task, 'userId' | 'swimlane'>): string {
  return task.userId ? userInboxKey(task.userId) : swimlaneInboxKey(task.swimlane)
}

/**
 * Who may see the instance besides the tenant's admins (docs/reference/identity.md#authorization-on-an-instance), as
 * keys: `user:` its initiator, contributors and the assignees of its open tasks, `swimlane:` the
 * swimlanes of its open tasks. A user may see it when one of the user's keys (services/engine/instances/authorization.ts
 * `viewerKeysOf`) is among them.
 */
export function viewersOf(instance: Pick<ProcessInstance, 'initiator' | 'contributorUsers' | 'tasks'>): string[] {
  // `?? []`: a document of an earlier release may lack a list (the migration derives these fields from it).
  const keys = new Set([userInboxKey(instance.initiator), ...(instance.contributorUsers ?? []).map(userInboxKey)])
  for (const task of instance.tasks ?? []) {
    if (task.status !== 'open') continue
    if (task.userId) keys.add(userInboxKey(task.userId))
    keys.add(swimlaneInboxKey(task.swimlane))
  }
  return [...keys]
}

/** The earliest due date of the instance's open tasks, null when none has one. */
export function nextDueAt(tasks: readonly Task[]): Date | null {
  let earliest: string | undefined
  for (const task of tasks) {
    if (task.status === 'open' && task.dueDate !== undefined && (earliest === undefined || task.dueDate < earliest)) earliest = task.dueDate
  }
  return earliest === undefined ? null : new Date(earliest)
}

/** When a failed thread failed: recorded since failures carry it, else (stored earlier) the instance's last update. */
export function failedAtOf(thread: ProcessInstance['threads'][number], instance: Pick<ProcessInstance, 'lastUpdate'>): string {
  return thread.failedAt ?? instance.lastUpdate
}

function latest(dates: readonly string[]): Date | null {
  let newest: string | undefined
  for (const date of dates) if (newest === undefined || date > newest) newest = date
  return newest === undefined ? null : new Date(newest)
}

/** The query fields of a stored context: what the reporting queries and the task inbox read through their indexes. */
export type QueryFields = Pick<
  StoredContext,
  'nextDueAt' | 'startedAt' | 'openTaskCount' | 'inbox' | 'newestOpenTaskAt' | 'hasIncident' | 'newestIncidentAt' | 'viewers'
>

/** The query fields of an instance. ISO dates of the instance are all of one format (UTC, milliseconds), so they compare as text. */
export function queryFields(instance: ProcessInstance): Required<QueryFields> {
  const tasks = instance.tasks ?? []
  const open = tasks.filter((task) => task.status === 'open')
  const failed = (instance.threads ?? []).filter((thread) => thread.status === 'failed')
  return {
    nextDueAt: nextDueAt(tasks),
    startedAt: new Date(instance.processStart),
    openTaskCount: open.length,
    inbox: [...new Set(open.map(inboxKeyOf))],
    newestOpenTaskAt: latest(open.map((task) => task.createdAt)),
    hasIncident: failed.length > 0,
    newestIncidentAt: latest(failed.map((thread) => failedAtOf(thread, instance))),
    viewers: viewersOf(instance),
  }
}
