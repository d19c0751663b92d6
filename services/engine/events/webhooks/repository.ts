/**
 * The `webhookDeliveries` collection as the delivery worker uses it. Every change of a delivery's
 * status is one atomic update whose filter states the status it leaves (and, while a try is under
 * way, the engine holding it), so engines sharing a store never try one delivery at the same time
 * and a stale engine cannot overwrite the outcome of the one that took it over.
 */
import { CollectionRepository } from '../../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { Store } from '../../../../store/port.js'
import { Collections, type StoredWebhookDelivery } from '../../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhookDeliveries: DeliveryRepository
  }
}

/** What a try ends in: delivered, due again at `dueAt`, or failed for good. */
export type TryOutcome =
  | { status: 'delivered'; statusCode: number }
  | { status: 'pending'; dueAt: Date; statusCode?: number | undefined; error: string }
  | { status: 'failed'; statusCode?: number | undefined; error: string }

export class DeliveryRepository extends CollectionRepository<StoredWebhookDelivery> {
  /** Named so they never clash with indexes the gateway creates on the same collection. */
  protected readonly indexes = [
    { keys: { status: 1, dueAt: 1 }, name: 'engine_webhook_due' },
    { keys: { orderKey: 1, sequence: 1 }, name: 'engine_webhook_order' },
    { keys: { status: 1, leaseUntil: 1 }, name: 'engine_webhook_lease' },
    { keys: { subscriptionId: 1, createdAt: -1 }, name: 'engine_webhook_subscription' },
    { keys: { status: 1, createdAt: 1 }, name: 'engine_webhook_settled' },
  ] as const

  /** `pending` deliveries due at `now`, longest due first; at most `limit`. */
  async due(now: Date, limit: number): Promise<StoredWebhookDelivery[]> {
    return this.collection.find({ status: 'pending', dueAt: { $lte: now } }, { sort: { dueAt: 1, sequence: 1 }, limit }).toArray()
  }

  /**
   * Is an earlier event of the same instance to the same subscription still to be delivered (or
   * being tried)? Then this one waits: a receiver gets an instance's events in the order they happened.
   */
  async hasEarlierOpen(delivery: Pick<StoredWebhookDelivery, 'orderKey' | 'sequence'>): Promise<boolean> {
    const earlier = await this.collection.findOne(
      { orderKey: delivery.orderKey, sequence: { $lt: delivery.sequence }, status: { $in: ['pending', 'delivering'] } },
      { projection: { _id: 1 } },
    )
    return earlier !== null
  }

  /** `pending` → `delivering`, held by `owner` until `leaseUntil`; null when another engine took it first. */
  async claim(delivery: StoredWebhookDelivery, owner: string, now: Date, leaseUntil: Date): Promise<StoredWebhookDelivery | null> {
    return this.collection.findOneAndUpdate(
      { _id: delivery._id, status: 'pending', dueAt: { $lte: now } },
      { $set: { status: 'delivering', leaseOwner: owner, leaseUntil } },
      { returnDocument: 'after' },
    )
  }

  /**
   * Tries whose engine stopped before recording the outcome (its claim lapsed) are due again: the
   * receiver may or may not have got them, and at least once means trying again.
   */
  async releaseLapsed(now: Date): Promise<number> {
    const result = await this.collection.updateMany(
      { status: 'delivering', leaseUntil: { $lt: now } },
      {
        $set: { status: 'pending', dueAt: now, lastError: 'the engine trying it stopped before the outcome was known' },
        $unset: { leaseOwner: '', leaseUntil: '' },
      },
    )
    return result.modifiedCount
  }

  /** Records a try's outcome (`tries` + 1); false when this engine no longer held the delivery. */
  async record(delivery: StoredWebhookDelivery, owner: string, outcome: TryOutcome, now: Date): Promise<boolean> {
    const set: Partial<StoredWebhookDelivery> = { status: outcome.status }
    const unset: Record<string, ''> = { leaseOwner: '', leaseUntil: '' }
    if (outcome.statusCode === undefined) unset.lastStatusCode = ''
    else set.lastStatusCode = outcome.statusCode
    if (outcome.status === 'delivered') {
      set.deliveredAt = now
      unset.lastError = ''
    } else set.lastError = outcome.error
    if (outcome.status === 'pending') set.dueAt = outcome.dueAt
    const result = await this.collection.updateOne(
      { _id: delivery._id, status: 'delivering', leaseOwner: owner },
      { $set: set, $unset: unset, $inc: { tries: 1 } },
    )
    return result.matchedCount === 1
  }

  /** Removes the settled (`delivered`, `failed`) deliveries created before `before`; resolves with how many. */
  async removeSettledBefore(before: Date): Promise<number> {
    const result = await this.collection.deleteMany({ status: { $in: ['delivered', 'failed'] }, createdAt: { $lt: before } })
    return result.deletedCount
  }

  async find(deliveryId: string): Promise<StoredWebhookDelivery | null> {
    return this.collection.findOne({ _id: deliveryId })
  }
}

export function deliveryRepository(store: Store): DeliveryRepository {
  return new DeliveryRepository(store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries))
}

export default repositoryPlugin('webhookDeliveries', ({ store }) => deliveryRepository(store), { name: 'webhook-deliveries' })
