/**
 * The notification records (one per process instance, `_id` = its processInstanceId), shared with
 * the engine: an instance's record is the view of its stored context, or the one stored in
 * `notifications` while that is current (store/notification-records.ts).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../../../store/port.js'
import { Collections, type StoredNotification } from '../../../store/collections.js'
import {
  currentRecord,
  recordOfContext,
  recordParts,
  recordSourcesOf,
  type RecordSources,
  storedRecordIsCurrent,
} from '../../../store/notification-records.js'

declare module 'fastify' {
  interface FastifyInstance {
    notificationRepository: NotificationRepository
  }
}

export class NotificationRepository {
  private readonly sources: RecordSources

  constructor(private readonly store: Store) {
    this.sources = recordSourcesOf(store)
  }

  /**
   * Sets the given paths of the instance's record, creating it when there is none. A record that is
   * its instance's view is first stored as it reads, over the instance's version, so the paths not
   * given keep what they read; it stays the record until the instance changes again.
   */
  async upsertFields(processInstanceId: string, fields: Record<string, unknown>): Promise<void> {
    const filter = { _id: processInstanceId }
    const { context, stored } = await recordParts(this.sources, processInstanceId)
    const view = context && !(stored && storedRecordIsCurrent(stored, context)) ? recordOfContext(context) : undefined
    if (!context || !view) {
      await this.sources.notifications.updateOne(filter, { $set: fields }, { upsert: true })
      return
    }
    const replacement = { ...view, basis: context.version }
    await this.store.applyAtomically([
      { collection: Collections.notifications, kind: 'replaceOne', filter, replacement, upsert: true },
      { collection: Collections.notifications, kind: 'updateOne', filter, update: { $set: fields }, upsert: true },
    ])
  }

  /** The instance's record, null when it has none. */
  async find(processInstanceId: string): Promise<StoredNotification | null> {
    return currentRecord(this.sources, processInstanceId)
  }
}

export function notificationRepository(store: Store): NotificationRepository {
  return new NotificationRepository(store)
}

async function notificationRepositoryPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('notificationRepository', notificationRepository(fastify.store))
}

export default fp(notificationRepositoryPlugin, { name: 'notification-upsert-repository', dependencies: ['store'] })
