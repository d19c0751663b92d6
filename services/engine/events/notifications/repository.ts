/**
 * The notification records, one per process instance, read newest `processInstance.lastUpdate`
 * first, a page at a time. A record is the view of the instance's stored context, or the one stored
 * in `notifications` while that is current (store/notification-records.ts): the records written
 * apart from a change (`POST /notify/send`, the gateway's `POST /notify`) and those of an earlier
 * release.
 */
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { AtomicWrite, Collection, Filter, SortSpec, Store } from '../../../../store/port.js'
import { Collections, type StoredContext, type StoredNotification } from '../../../../store/collections.js'
import {
  currentRecord,
  publicRecord,
  recordOfContext,
  type RecordSources,
  storedRecordIsCurrent,
} from '../../../../store/notification-records.js'

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

const NEWEST_FIRST: SortSpec = { 'processInstance.lastUpdate': -1, _id: -1 }

/** Whether `a` lists before `b`: newer `lastUpdate` first, then the greater id. */
function listsBefore(a: NotificationPosition, b: NotificationPosition): boolean {
  return a.lastUpdate !== b.lastUpdate ? a.lastUpdate > b.lastUpdate : a.processInstanceId > b.processInstanceId
}

function positionOf(doc: { _id: string; processInstance?: { lastUpdate?: string } }): NotificationPosition {
  return { lastUpdate: doc.processInstance?.lastUpdate ?? '', processInstanceId: doc._id }
}

function afterFilter(after: NotificationPosition): Filter {
  return {
    $or: [
      { 'processInstance.lastUpdate': { $lt: after.lastUpdate } },
      { 'processInstance.lastUpdate': after.lastUpdate, _id: { $lt: after.processInstanceId } },
    ],
  }
}

/** The documents of a collection matching `filter`, newest first, read `chunk` at a time as they are taken. */
class NewestFirst<T extends { _id: string; processInstance?: { lastUpdate?: string } }> {
  private buffered: T[] = []
  private exhausted = false
  private last: NotificationPosition | undefined

  constructor(
    private readonly collection: Collection<T>,
    private readonly filter: Filter,
    private readonly chunk: number,
    after: NotificationPosition | undefined,
  ) {
    this.last = after
  }

  async peek(): Promise<T | undefined> {
    if (this.buffered.length === 0 && !this.exhausted) {
      const query = this.last ? { $and: [this.filter, afterFilter(this.last)] } : this.filter
      this.buffered = await this.collection.find(query, { sort: NEWEST_FIRST, limit: this.chunk }).toArray()
      this.exhausted = this.buffered.length < this.chunk
      const lastRead = this.buffered[this.buffered.length - 1]
      if (lastRead) this.last = positionOf(lastRead)
    }
    return this.buffered[0]
  }

  take(): void {
    this.buffered.shift()
  }
}

export class NotificationRepository {
  private readonly sources: RecordSources

  constructor(store: Store) {
    this.sources = {
      contexts: store.collection<StoredContext>(Collections.contexts),
      notifications: store.collection<StoredNotification>(Collections.notifications),
    }
  }

  async ensureIndexes(): Promise<void> {
    await this.sources.notifications.createIndex({ appId: 1, 'processInstance.lastUpdate': -1 })
    // The views' order, over the instances of every age (ended ones are listed too).
    await this.sources.contexts.createIndex(
      { appId: 1, 'processInstance.lastUpdate': -1, _id: -1 },
      { name: 'engine_notification_records' },
    )
  }

  /**
   * Stores `record` as the instance's record until it changes after version `basis` (the instance's
   * version the record was made from), replacing any stored one.
   */
  async store(record: StoredNotification, basis: number): Promise<void> {
    await this.sources.notifications.replaceOne({ _id: record._id }, { ...record, basis }, { upsert: true })
  }

  /**
   * The write of a change that removes the record stored apart from an earlier version, which the
   * change's view supersedes; nothing when none is stored.
   */
  supersededRecordWrites(processInstanceId: string): AtomicWrite[] {
    return [{ collection: Collections.notifications, kind: 'deleteMany', filter: { _id: processInstanceId } }]
  }

  async find(processInstanceId: string): Promise<StoredNotification | null> {
    return currentRecord(this.sources, processInstanceId)
  }

  /**
   * The records matching `filter` (on the record's fields, which a view shares with its context),
   * newest first, starting after `after`; at most `limit`. Views and stored records are read side by
   * side in the same order, and each instance lists once: its view, or its stored record while that
   * is current.
   */
  async page(filter: Filter, limit: number, after?: NotificationPosition): Promise<StoredNotification[]> {
    const views = new NewestFirst(this.sources.contexts, { $and: [filter, { notice: { $exists: true } }] }, limit + 1, after)
    const stored = new NewestFirst(this.sources.notifications, filter, limit + 1, after)
    const records: StoredNotification[] = []
    while (records.length < limit) {
      const [view, record] = await Promise.all([views.peek(), stored.peek()])
      if (!view && !record) break
      if (view && (!record || listsBefore(positionOf(view), positionOf(record)))) {
        views.take()
        const override = await this.sources.notifications.findOne({ _id: view._id })
        const viewRecord = recordOfContext(view)
        if (viewRecord && !(override && storedRecordIsCurrent(override, view))) records.push(viewRecord)
      } else if (record) {
        stored.take()
        const context = await this.sources.contexts.findOne({ _id: record._id })
        if (storedRecordIsCurrent(record, context)) records.push(publicRecord(record))
      }
    }
    return records
  }
}

export function notificationRepository(store: Store): NotificationRepository {
  return new NotificationRepository(store)
}

export default repositoryPlugin('notificationRecords', ({ store }) => notificationRepository(store), { name: 'notifications-repository' })
