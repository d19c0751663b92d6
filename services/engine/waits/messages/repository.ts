/**
 * The message subscriptions (the threads waiting at receive steps) and the buffered messages (kept
 * for their `ttl`). Subscriptions are written only with the commit of the change that makes a
 * thread wait or go on (subscriptions.ts); this reads them by tenant, message name and correlation
 * key through one index, so a correlate never scans instances.
 */
import type { IndexedRepository } from '../../../../plugins/store/repository-plugin.js'
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { Collection, Filter, Store } from '../../../../store/port.js'
import { Collections, type StoredBufferedMessage, type StoredMessageSubscription } from '../../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    messages: MessageRepository
  }
}

export interface MessageAddress {
  organizationId: string
  appId: string
  messageName: string
  correlationKey: string
}

export class MessageRepository implements IndexedRepository {
  private readonly subscriptions: Collection<StoredMessageSubscription>
  private readonly buffered: Collection<StoredBufferedMessage>

  constructor(store: Store) {
    this.subscriptions = store.collection<StoredMessageSubscription>(Collections.messageSubscriptions)
    this.buffered = store.collection<StoredBufferedMessage>(Collections.bufferedMessages)
  }

  async ensureIndexes(): Promise<void> {
    await this.subscriptions.createIndex(
      { organizationId: 1, appId: 1, messageName: 1, correlationKey: 1 },
      { name: 'engine_message_subscription_address' },
    )
    await this.buffered.createIndex(
      { organizationId: 1, appId: 1, messageName: 1, correlationKey: 1, createdAt: 1 },
      { name: 'engine_buffered_message_address' },
    )
    await this.buffered.createIndex({ expiresAt: 1 }, { name: 'engine_buffered_message_ttl', expireAfterSeconds: 0 })
  }

  /** The threads waiting for the message (of instances of `processId` only, when given), at most `limit`. */
  waiting(address: MessageAddress, processId: string | undefined, limit: number): Promise<StoredMessageSubscription[]> {
    const filter: Filter = { ...address, ...(processId === undefined ? {} : { processId }) }
    return this.subscriptions.find(filter, { sort: { createdAt: 1 }, limit }).toArray()
  }

  buffer(message: StoredBufferedMessage): Promise<unknown> {
    return this.buffered.insertOne({ ...message })
  }

  /** The oldest message kept for a thread like `subscription` that nobody took and that has not expired. */
  bufferedFor(subscription: StoredMessageSubscription, now: Date): Promise<StoredBufferedMessage | null> {
    const { organizationId, appId, messageName, correlationKey, processId } = subscription
    return this.buffered.findOne(
      {
        organizationId,
        appId,
        messageName,
        correlationKey,
        consumedBy: { $exists: false },
        expiresAt: { $gt: now },
        $or: [{ processId: { $exists: false } }, { processId }],
      },
      { sort: { createdAt: 1 } },
    )
  }

  findBuffered(messageId: string): Promise<StoredBufferedMessage | null> {
    return this.buffered.findOne({ _id: messageId })
  }

  /** How many subscriptions wait and how many buffered messages are kept now (the metrics). */
  async counts(now: Date): Promise<{ waiting: number; buffered: number }> {
    const [waiting, buffered] = await Promise.all([
      this.subscriptions.countDocuments({}),
      this.buffered.countDocuments({ consumedBy: { $exists: false }, expiresAt: { $gt: now } }),
    ])
    return { waiting, buffered }
  }
}

export default repositoryPlugin('messages', ({ store }) => new MessageRepository(store), { name: 'messages-repository' })
