/** Test support: reading what the engine stored for a process instance, to prove what a request changed. */
import type { Store } from '../../store/port.js'
import {
  Collections,
  type StoredBatchJob,
  type StoredContext,
  type StoredNotification,
  type StoredTaskLock,
} from '../../store/collections.js'
import { currentRecord, recordSourcesOf } from '../../store/notification-records.js'
import { type ActivityRecord, instanceActivities } from '../../store/activity-log.js'

export async function storedInstance(store: Store, processInstanceId: string): Promise<StoredContext> {
  const stored = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
  if (!stored) throw new Error(`no stored instance ${processInstanceId}`)
  return stored
}

/**
 * The instance's activity records in the order they happened (its document's log and `activities`,
 * store/activity-log.ts), only those of `type` when given.
 */
export async function storedActivities(store: Store, processInstanceId: string, type?: string): Promise<ActivityRecord[]> {
  const records = (await instanceActivities(store, processInstanceId)).reverse()
  return type === undefined ? records : records.filter((record) => record.type === type)
}

export async function storedActivityTypes(store: Store, processInstanceId: string): Promise<string[]> {
  return (await storedActivities(store, processInstanceId)).map((record) => record.type)
}

/** The batch jobs of `kind`, of one instance when given, in the order `sortBy` gives. */
export async function storedBatchJobs(
  store: Store,
  kind: StoredBatchJob['kind'],
  processInstanceId: string | undefined,
  sortBy: 'createdAt' | 'dueAt',
): Promise<StoredBatchJob[]> {
  const filter = { kind, ...(processInstanceId === undefined ? {} : { 'payload.processInstanceId': processInstanceId }) }
  return store
    .collection<StoredBatchJob>(Collections.batchJobs)
    .find(filter, { sort: { [sortBy]: 1 } })
    .toArray()
}

/** The instance's notification record as the engine and the gateway read it (store/notification-records.ts). */
export async function notificationRecordOf(store: Store, processInstanceId: string): Promise<StoredNotification | null> {
  return currentRecord(recordSourcesOf(store), processInstanceId)
}

export async function lockHolder(store: Store, taskId: string): Promise<string | null> {
  const lock = await store.collection<StoredTaskLock>(Collections.taskLocks).findOne({ _id: taskId })
  return lock?.userId ?? null
}
