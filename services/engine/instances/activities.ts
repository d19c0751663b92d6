/**
 * The activity log: one record per user-visible event of a process instance, read newest first.
 * Records are only ever added. A change keeps its records in the instance's own document and moves
 * the oldest to `activities` (store/activity-log.ts); records written apart from a change go to
 * `activities` directly.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import { newObjectIdHex } from '../../../store/object-id.js'
import type { AtomicWrite, Collection, Store } from '../../../store/port.js'
import { type ActivityLogEntry, Collections, type StoredActivity } from '../../../store/collections.js'
import { type ActivityRecord, appendedLog, collectedRecords, newestFirst } from '../../../store/activity-log.js'

declare module 'fastify' {
  interface FastifyInstance {
    activities: ActivityRepository
  }
}

export class ActivityRepository {
  constructor(private readonly collection: Collection<StoredActivity>) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ processInstanceId: 1, timeStamp: -1 })
  }

  /**
   * What a change of the instance stores of `entries`, its records: the log its document keeps
   * after `log` (the one the change read), and the inserts of the oldest records it keeps no longer.
   */
  logged(
    processInstanceId: string,
    log: readonly ActivityLogEntry[] | undefined,
    entries: readonly ActivityLogEntry[],
  ): { activityLog: ActivityLogEntry[]; writes: AtomicWrite[] } {
    const { log: activityLog, moved } = appendedLog(log, entries)
    return { activityLog, writes: this.writesFor(moved.map((entry) => ({ processInstanceId, ...entry }))) }
  }

  /** The inserts recording `records` in `activities`, for a batch that stores them with a change. */
  writesFor(records: readonly ActivityRecord[]): AtomicWrite[] {
    // Ids grow within a process, so records of the same millisecond still read newest first.
    return records.map((record) => ({ collection: Collections.activities, kind: 'insertOne', doc: { _id: newObjectIdHex(), ...record } }))
  }

  /** Records written apart from a change of the instance (a form opened, a file downloaded). */
  async record(...records: ActivityRecord[]): Promise<void> {
    if (records.length === 0) return
    // Ids grow within a process, so records of the same millisecond still read newest first.
    const documents = records.map((record) => ({ _id: newObjectIdHex(), ...record }))
    if (documents.length === 1) await this.collection.insertOne(documents[0] as StoredActivity)
    else await this.collection.insertMany(documents)
  }

  /** The instance's activity, newest first: its document's `log` and its records in `activities`. */
  async listFor(processInstanceId: string, log: readonly ActivityLogEntry[] | undefined): Promise<ActivityRecord[]> {
    return newestFirst(processInstanceId, log, await collectedRecords(this.collection, processInstanceId))
  }
}

export function activityRepository(store: Store): ActivityRepository {
  return new ActivityRepository(store.collection<StoredActivity>(Collections.activities))
}

export default repositoryPlugin('activities', ({ store }) => activityRepository(store), { name: 'activities-repository' })
