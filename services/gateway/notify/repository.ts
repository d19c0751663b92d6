/** The notification records (`notifications`, one per process instance, `_id` = its processInstanceId), shared with the engine. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Collection, Store } from '../../../store/port.js'
import { Collections, type StoredNotification } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    notificationRepository: NotificationRepository
  }
}

export class NotificationRepository {
  constructor(private readonly collection: Collection<StoredNotification>) {}

  /** Sets the given paths of the record, creating it when there is none. */
  async upsertFields(processInstanceId: string, fields: Record<string, unknown>): Promise<void> {
    await this.collection.updateOne({ _id: processInstanceId }, { $set: fields }, { upsert: true })
  }

  async find(processInstanceId: string): Promise<StoredNotification | null> {
    return this.collection.findOne({ _id: processInstanceId })
  }
}

export function notificationRepository(store: Store): NotificationRepository {
  return new NotificationRepository(store.collection<StoredNotification>(Collections.notifications))
}

async function notificationRepositoryPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('notificationRepository', notificationRepository(fastify.store))
}

export default fp(notificationRepositoryPlugin, { name: 'notification-upsert-repository', dependencies: ['store'] })
