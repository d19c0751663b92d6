/**
 * The `notifications` collection: one record per process instance, `_id` = processInstanceId,
 * rewritten by the engine after every change (the gateway's `POST /notify` upserts into it too).
 * Read per app, newest `processInstance.lastUpdate` first, a page at a time.
 */
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { AtomicWrite, Collection, Filter, Store } from '../../../../store/port.js'
import { Collections, type StoredNotification } from '../../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    notificationRecords: NotificationRepository
  }
}

/** Where a page ends: the sort key of its last record. */
export interface NotificationPosition {
  lastUpdate: string
  processInstanceId: string
}

export class NotificationRepository {
  constructor(private readonly collection: Collection<StoredNotification>) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ appId: 1, 'processInstance.lastUpdate': -1 })
  }

  /** The write replacing the instance's record (or creating it), for a batch that stores it with the change. */
  writesFor(record: StoredNotification): AtomicWrite[] {
    const filter = { _id: record._id }
    return [{ collection: Collections.notifications, kind: 'replaceOne', filter, replacement: { ...record }, upsert: true }]
  }

  /** Replaces the instance's record (or creates it). */
  async write(record: StoredNotification): Promise<void> {
    await this.collection.replaceOne({ _id: record._id }, record, { upsert: true })
  }

  async find(processInstanceId: string): Promise<StoredNotification | null> {
    return this.collection.findOne({ _id: processInstanceId })
  }

  /** Records matching `filter`, newest first, starting after `after`; at most `limit`. */
  async page(filter: Filter, limit: number, after?: NotificationPosition): Promise<StoredNotification[]> {
    const query = after
      ? {
          $and: [
            filter,
            {
              $or: [
                { 'processInstance.lastUpdate': { $lt: after.lastUpdate } },
                { 'processInstance.lastUpdate': after.lastUpdate, _id: { $lt: after.processInstanceId } },
              ],
            },
          ],
        }
      : filter
    return this.collection.find(query, { sort: { 'processInstance.lastUpdate': -1, _id: -1 }, limit }).toArray()
  }
}

export function notificationRepository(store: Store): NotificationRepository {
  return new NotificationRepository(store.collection<StoredNotification>(Collections.notifications))
}

export default repositoryPlugin('notificationRecords', ({ store }) => notificationRepository(store), { name: 'notifications-repository' })
