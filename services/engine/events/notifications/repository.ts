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
  recordSourcesOf,
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

/** Whether `a` lists before `b`: newer `lastUpdate` first, then the greater id. */
function listsBefore(a: NotificationPosition, b: NotificationPosition): boolean {
  return a.lastUpdate !== b.lastUpdate ? a.lastUpdate > b.lastUpdate : a.processInstanceId > b.processInstanceId
}

/** How one collection holds the records' order: the field of `lastUpdate`, read from its documents by `positionOf`. */
interface RecordOrder<T> {
  field: string
  positionOf(doc: T): NotificationPosition
}

const STORED_ORDER: RecordOrder<StoredNotification> = {
  field: 'processInstance.lastUpdate',
  positionOf: (record) => ({ lastUpdate: record.processInstance?.lastUpdate ?? '', processInstanceId: record._id }),
}

const VIEW_ORDER: RecordOrder<StoredContext> = {
  field: 'notice.lastUpdate',
  positionOf: (context) => ({ lastUpdate: context.notice?.lastUpdate ?? '', processInstanceId: context._id }),
}

/** The documents after `after` in `order`; the bound on its field alone lets an index start there. */
function afterFilter(field: string, after: NotificationPosition): Filter {
  return {
    [field]: { $lte: after.lastUpdate },
    $or: [{ [field]: { $lt: after.lastUpdate } }, { [field]: after.lastUpdate, _id: { $lt: after.processInstanceId } }],
  }
}

/** The documents of a collection matching `filter`, newest first, read `chunk` at a time as they are taken. */
class NewestFirst<T extends { _id: string }> {
  private buffered: T[] = []
  private exhausted = false
  private last: NotificationPosition | undefined

  constructor(
    private readonly collection: Collection<T>,
    private readonly order: RecordOrder<T>,
    private readonly filter: Filter,
    private readonly chunk: number,
    after: NotificationPosition | undefined,
  ) {
    this.last = after
  }

  async peek(): Promise<T | undefined> {
    if (this.buffered.length === 0 && !this.exhausted) {
      const query = this.last ? { $and: [this.filter, afterFilter(this.order.field, this.last)] } : this.filter
      const sort: SortSpec = { [this.order.field]: -1, _id: -1 }
      this.buffered = await this.collection.find(query, { sort, limit: this.chunk }).toArray()
      this.exhausted = this.buffered.length < this.chunk
      const lastRead = this.buffered[this.buffered.length - 1]
      if (lastRead) this.last = this.order.positionOf(lastRead)
    }
    return this.buffered[0]
  }

  /** Where the document `peek` answered lists. */
  position(doc: T): NotificationPosition {
    return this.order.positionOf(doc)
  }

  take(): void {
    this.buffered.shift()
  }
}

export class NotificationRepository {
  private readonly sources: RecordSources

  constructor(store: Store) {
    this.sources = recordSourcesOf(store)
  }

  async ensureIndexes(): Promise<void> {
    await this.sources.notifications.createIndex({ appId: 1, 'processInstance.lastUpdate': -1 })
    // The views' order, over the instances of every age (ended ones are listed too).
    await this.sources.contexts.createIndex({ appId: 1, [VIEW_ORDER.field]: -1, _id: -1 }, { name: 'engine_notification_records' })
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
    // Instances stored before records were views have no notice: the range leaves them to the stored records.
    const viewFilter = { $and: [filter, { [VIEW_ORDER.field]: { $gt: '' } }] }
    const views = new NewestFirst(this.sources.contexts, VIEW_ORDER, viewFilter, limit + 1, after)
    const stored = new NewestFirst(this.sources.notifications, STORED_ORDER, filter, limit + 1, after)
    const records: StoredNotification[] = []
    while (records.length < limit) {
      const [view, record] = await Promise.all([views.peek(), stored.peek()])
      if (!view && !record) break
      if (view && (!record || listsBefore(views.position(view), stored.position(record)))) {
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
