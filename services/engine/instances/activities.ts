/**
 * The activity log (`activities`): one record per user-visible event of a process instance, read
 * newest first. Records are only ever added.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { newObjectIdHex } from '../../../store/object-id.js'
import type { AtomicWrite, Collection, Store } from '../../../store/port.js'
import { Collections, type StoredActivity } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    activities: ActivityRepository
  }
}

export type ActivityRecord = Omit<StoredActivity, '_id'>

export class ActivityRepository {
  constructor(private readonly collection: Collection<StoredActivity>) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ processInstanceId: 1, timeStamp: -1 })
  }

  /** The inserts recording `records`, for a batch that stores them with the change they describe. */
  writesFor(records: readonly ActivityRecord[]): AtomicWrite[] {
    // Ids grow within a process, so records of the same millisecond still read newest first.
    return records.map((record) => ({ collection: Collections.activities, kind: 'insertOne', doc: { _id: newObjectIdHex(), ...record } }))
  }

  async record(...records: ActivityRecord[]): Promise<void> {
    if (records.length === 0) return
    // Ids grow within a process, so records of the same millisecond still read newest first.
    const documents = records.map((record) => ({ _id: newObjectIdHex(), ...record }))
    if (documents.length === 1) await this.collection.insertOne(documents[0] as StoredActivity)
    else await this.collection.insertMany(documents)
  }

  /** The instance's activity, newest first. */
  async listFor(processInstanceId: string): Promise<ActivityRecord[]> {
    const found = await this.collection.find({ processInstanceId }, { sort: { timeStamp: -1, _id: -1 } }).toArray()
    return found.map(({ _id, ...record }) => record)
  }
}

export function activityRepository(store: Store): ActivityRepository {
  return new ActivityRepository(store.collection<StoredActivity>(Collections.activities))
}

export default repositoryPlugin('activities', ({ store }) => activityRepository(store), { name: 'activities-repository' })
