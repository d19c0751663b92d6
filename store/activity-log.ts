/**
 * An instance's activity records (docs/reference/instances.md#activities) are kept in two places.
 * The records of its latest changes are in its own document (`activityLog`, oldest first): each
 * change appends its records to the log it read and stores the log with the instance, in the same
 * write. So a change stores no document per record, and an ended instance's records go to the cold
 * tier with it, under no index keys of their own. The oldest records beyond ACTIVITY_LOG_LENGTH move
 * to `activities` in the change's batch, which bounds what every change rewrites. `activities` also
 * holds the records written apart from a change (a form opened, a file downloaded) and those an earlier
 * release wrote. An instance's activity is both, newest first.
 */
import { type ActivityLogEntry, Collections, type StoredActivity } from './collections.js'
import type { Collection, Store } from './port.js'

/** How many records an instance's document keeps: the last few changes of a usual process, and a bound on its size. */
export const ACTIVITY_LOG_LENGTH = 20

/** An activity record as read: the instance it belongs to, without a store id. */
export type ActivityRecord = Omit<StoredActivity, '_id'>

/** The instance's log once `entries` are appended, and the oldest entries it no longer keeps (oldest first). */
export function appendedLog(
  log: readonly ActivityLogEntry[] | undefined,
  entries: readonly ActivityLogEntry[],
): { log: ActivityLogEntry[]; moved: ActivityLogEntry[] } {
  const whole = [...(log ?? []), ...entries]
  const over = Math.max(0, whole.length - ACTIVITY_LOG_LENGTH)
  return { log: whole.slice(over), moved: whole.slice(0, over) }
}

/**
 * An instance's records newest first, from its log (oldest first) and from `activities` (newest
 * first). Of records of the same millisecond, the log's come first: a record moves to `activities`
 * only once newer ones follow it in the log, and an earlier release's records predate every log.
 */
export function newestFirst(
  processInstanceId: string,
  log: readonly ActivityLogEntry[] | undefined,
  collected: readonly ActivityRecord[],
): ActivityRecord[] {
  const logged = (log ?? []).map((entry) => ({ processInstanceId, ...entry })).reverse()
  const records: ActivityRecord[] = []
  let fromLog = 0
  let fromCollection = 0
  while (fromLog < logged.length || fromCollection < collected.length) {
    const next = logged[fromLog]
    const other = collected[fromCollection]
    if (next && (!other || next.timeStamp >= other.timeStamp)) {
      records.push(next)
      fromLog++
    } else if (other) {
      records.push(other)
      fromCollection++
    }
  }
  return records
}

/** The records of an instance kept in `activities`, newest first, without their store ids. */
export async function collectedRecords(activities: Collection<StoredActivity>, processInstanceId: string): Promise<ActivityRecord[]> {
  const found = await activities.find({ processInstanceId }, { sort: { timeStamp: -1, _id: -1 } }).toArray()
  return found.map(({ _id, ...record }) => record)
}

/** Every record of the instance, newest first, read from the store (its document's log and `activities`). */
export async function instanceActivities(store: Store, processInstanceId: string): Promise<ActivityRecord[]> {
  const contexts = store.collection<{ _id: string; activityLog?: ActivityLogEntry[] }>(Collections.contexts)
  const stored = await contexts.findOne({ _id: processInstanceId }, { projection: { activityLog: 1 } })
  const collected = await collectedRecords(store.collection<StoredActivity>(Collections.activities), processInstanceId)
  return newestFirst(processInstanceId, stored?.activityLog, collected)
}
