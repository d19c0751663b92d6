/** Test support: reading what the engine stored for a process instance, to prove what a request changed. */
import type { Store } from '../../store/port.js'
import {
  Collections,
  type StoredActivity,
  type StoredContext,
  type StoredNotification,
  type StoredTaskLock,
} from '../../store/collections.js'

export async function storedInstance(store: Store, processInstanceId: string): Promise<StoredContext> {
  const stored = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
  if (!stored) throw new Error(`no stored instance ${processInstanceId}`)
  return stored
}

export async function storedActivityTypes(store: Store, processInstanceId: string): Promise<string[]> {
  const records = await store
    .collection<StoredActivity>(Collections.activities)
    .find({ processInstanceId }, { sort: { timeStamp: 1, _id: 1 } })
    .toArray()
  return records.map((record) => record.type)
}

export async function storedNotification(store: Store, processInstanceId: string): Promise<StoredNotification | null> {
  return store.collection<StoredNotification>(Collections.notifications).findOne({ _id: processInstanceId })
}

export async function lockHolder(store: Store, taskId: string): Promise<string | null> {
  const lock = await store.collection<StoredTaskLock>(Collections.taskLocks).findOne({ _id: taskId })
  return lock?.userId ?? null
}
