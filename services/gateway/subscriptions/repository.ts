/**
 * Webhook subscriptions (`webhookSubscriptions`) and their deliveries (`webhookDeliveries`, the
 * outbox the engine writes and sends), as the gateway's admin endpoints read and change them. Every
 * lookup names the tenant, so another tenant's subscription or delivery is never found.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { WebhookDeliveryStatus } from '../../../openapi/generated/schemas.js'
import type { Collection, Filter, Store } from '../../../store/port.js'
import { Collections, type StoredWebhookDelivery, type StoredWebhookSubscription } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    subscriptionRepository: SubscriptionRepository
  }
}

/** The tenant parts a request names (each applied when given). */
export interface TenantFilter {
  organizationId?: string | undefined
  appId?: string | undefined
}

/** Where a page of deliveries ends: the sort key of its last one. */
export interface DeliveryPosition {
  createdAt: Date
  deliveryId: string
}

function tenantFilter(tenant: TenantFilter): Filter {
  return {
    ...(tenant.organizationId === undefined ? {} : { organizationId: tenant.organizationId }),
    ...(tenant.appId === undefined ? {} : { appId: tenant.appId }),
  }
}

export class SubscriptionRepository {
  constructor(
    private readonly store: Store,
    private readonly subscriptions: Collection<StoredWebhookSubscription>,
    private readonly deliveries: Collection<StoredWebhookDelivery>,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.subscriptions.createIndex({ organizationId: 1, appId: 1, createdAt: 1 }, { name: 'gateway_webhook_subscriptions_list' })
    await this.deliveries.createIndex({ subscriptionId: 1, createdAt: -1, _id: -1 }, { name: 'gateway_webhook_deliveries_page' })
  }

  async insert(subscription: StoredWebhookSubscription): Promise<void> {
    await this.subscriptions.insertOne({ ...subscription })
  }

  async list(tenant: Required<TenantFilter>): Promise<StoredWebhookSubscription[]> {
    return this.subscriptions.find(tenantFilter(tenant), { sort: { createdAt: 1, _id: 1 } }).toArray()
  }

  async find(subscriptionId: string, tenant: TenantFilter): Promise<StoredWebhookSubscription | null> {
    return this.subscriptions.findOne({ _id: subscriptionId, ...tenantFilter(tenant) })
  }

  /** Removes the subscription and its deliveries in one atomic batch; false when the tenant has no such subscription. */
  async delete(subscriptionId: string, tenant: TenantFilter): Promise<boolean> {
    if ((await this.find(subscriptionId, tenant)) === null) return false
    await this.store.applyAtomically([
      { collection: Collections.webhookSubscriptions, kind: 'deleteMany', filter: { _id: subscriptionId, ...tenantFilter(tenant) } },
      { collection: Collections.webhookDeliveries, kind: 'deleteMany', filter: { subscriptionId } },
    ])
    return true
  }

  /** The subscription's deliveries (in `status` when given), newest first, after `after`; at most `limit`. */
  async deliveryPage(
    subscriptionId: string,
    status: WebhookDeliveryStatus | undefined,
    limit: number,
    after?: DeliveryPosition,
  ): Promise<StoredWebhookDelivery[]> {
    const filter: Filter = { subscriptionId, ...(status === undefined ? {} : { status }) }
    const query = after
      ? {
          $and: [
            filter,
            { $or: [{ createdAt: { $lt: after.createdAt } }, { createdAt: after.createdAt, _id: { $lt: after.deliveryId } }] },
          ],
        }
      : filter
    return this.deliveries.find(query, { sort: { createdAt: -1, _id: -1 }, limit, projection: { body: 0 } }).toArray()
  }

  async findDelivery(subscriptionId: string, deliveryId: string): Promise<StoredWebhookDelivery | null> {
    return this.deliveries.findOne({ _id: deliveryId, subscriptionId }, { projection: { body: 0 } })
  }

  /**
   * Queues a delivery again (`pending`, tries 0, due now) unless a try is under way; false when it
   * was being tried (or is gone).
   */
  async requeue(subscriptionId: string, deliveryId: string, now: Date): Promise<boolean> {
    const result = await this.deliveries.updateOne(
      { _id: deliveryId, subscriptionId, status: { $in: ['pending', 'delivered', 'failed'] } },
      { $set: { status: 'pending', tries: 0, dueAt: now }, $unset: { deliveredAt: '' } },
    )
    return result.matchedCount === 1
  }
}

export function subscriptionRepository(store: Store): SubscriptionRepository {
  return new SubscriptionRepository(
    store,
    store.collection<StoredWebhookSubscription>(Collections.webhookSubscriptions),
    store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries),
  )
}

export default repositoryPlugin('subscriptionRepository', ({ store }) => subscriptionRepository(store), { name: 'subscription-repository' })
