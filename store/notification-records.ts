/**
 * The notification record of a process instance (docs/reference/events.md#notification-records) is a
 * view of its stored context: every change stores the record's own fields with the instance
 * (`notice`: the change's event and the inform list), and the rest (the instance, whether a task is
 * open and the newest one) is the context's. So a change writes no second copy of the instance.
 *
 * A record stored in `notifications` stands instead of the view while it is current: one written
 * apart from a change (the gateway's `POST /notify`, `POST /notify/send`) over the instance's version
 * `basis`, until the instance changes again; one an earlier release wrote with the change it
 * describes, until the instance changes again; one of an id the engine does not know, always. The
 * engine and the gateway both read records through here.
 */
import type { NotificationEventType } from '../openapi/generated/schemas.js'
import type { InformItem, ProcessState, Task } from '../model/instance.js'
import { Collections, type StoredContext, type StoredNotification } from './collections.js'
import type { Collection, Store } from './port.js'

/** The newest open task (the last created when several were created at once). */
export function newestOpenTask(tasks: readonly Task[]): Task | undefined {
  let newest: Task | undefined
  for (const task of tasks) if (task.status === 'open' && (!newest || task.createdAt >= newest.createdAt)) newest = task
  return newest
}

/** The record of an instance in `state` after a change with `eventType` and the evaluated `informList`. */
export function notificationRecord(state: ProcessState, eventType: NotificationEventType, informList: InformItem[]): StoredNotification {
  const { processInstance } = state
  const task = newestOpenTask(processInstance.tasks)
  return {
    _id: processInstance.processInstanceId,
    appId: processInstance.appId,
    organizationId: processInstance.organizationId,
    eventType,
    informList,
    processInstance,
    onUs: task !== undefined,
    ...(task ? { task } : {}),
  }
}

/** The record an instance's context gives, or undefined for one stored before records were views. */
export function recordOfContext(context: StoredContext): StoredNotification | undefined {
  return context.notice && notificationRecord(context, context.notice.eventType, context.notice.informList)
}

/** Whether the stored record is the instance's record rather than its context's view. */
export function storedRecordIsCurrent(stored: StoredNotification, context: StoredContext | null): boolean {
  if (!context?.notice) return true
  if (stored.basis !== undefined) return stored.basis >= context.version
  // Written by an earlier release in the batch of the change it describes: current until the next.
  return (stored.processInstance?.lastUpdate ?? '') >= context.processInstance.lastUpdate
}

/** The record as clients see it: without the version it was written over. */
export function publicRecord(stored: StoredNotification): StoredNotification {
  if (stored.basis === undefined) return stored
  const { basis: _basis, ...record } = stored
  return record
}

/** The collections a record is read from. */
export interface RecordSources {
  contexts: Collection<StoredContext>
  notifications: Collection<StoredNotification>
}

export function recordSourcesOf(store: Store): RecordSources {
  return {
    contexts: store.collection<StoredContext>(Collections.contexts),
    notifications: store.collection<StoredNotification>(Collections.notifications),
  }
}

/** What an instance's record is made of: its context and the stored record, either possibly absent. */
interface RecordParts {
  context: StoredContext | null
  stored: StoredNotification | null
}

export async function recordParts(sources: RecordSources, processInstanceId: string): Promise<RecordParts> {
  const [context, stored] = await Promise.all([
    sources.contexts.findOne({ _id: processInstanceId }),
    sources.notifications.findOne({ _id: processInstanceId }),
  ])
  return { context, stored }
}

/** The record the parts make: the stored one while it is current, else the context's view; null for none. */
function recordOfParts({ context, stored }: RecordParts): StoredNotification | null {
  if (stored && storedRecordIsCurrent(stored, context)) return publicRecord(stored)
  return (context && recordOfContext(context)) ?? null
}

/** The instance's notification record, null when it has none. */
export async function currentRecord(sources: RecordSources, processInstanceId: string): Promise<StoredNotification | null> {
  return recordOfParts(await recordParts(sources, processInstanceId))
}
