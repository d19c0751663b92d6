/**
 * The webhook outbox (docs/webhooks.md): for a change about to be stored, one delivery record per
 * subscription of the instance's tenant whose `events` (and `processIds`, when it has any) match the
 * change's event, as writes that go into the change's own atomic batch. A crash before the commit
 * leaves neither the change nor its deliveries, after it both: a delivery can be late, never lost.
 * Every event type the notifications produce is delivered, whatever types there are.
 */
import { randomUUID } from 'node:crypto'
import type { NotificationEventType } from '../../../../openapi/generated/schemas.js'
import { deepFreeze } from '../../../../lib/deep-freeze.js'
import { readThrough } from '../../../../plugins/cache/read-through.js'
import type { CacheRegistry } from '../../../../plugins/cache/registry.js'
import { WEBHOOK_SUBSCRIPTIONS_CACHE, WRITTEN_ELSEWHERE_MAX_AGE_MS } from '../../../../plugins/cache/written-elsewhere.js'
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { AtomicWrite, Collection, Store } from '../../../../store/port.js'
import { Collections, type StoredWebhookDelivery, type StoredWebhookSubscription } from '../../../../store/collections.js'
import { tenantKey } from '../../../../store/tenant.js'
import { newestOpenTask } from '../../../../store/notification-records.js'
import type { ProcessState } from '../../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhookOutbox: WebhookOutbox
  }
}

/** A change as the outbox sees it: the state stored, its event, the version it gets and when. */
export interface OutboxChange {
  state: ProcessState
  eventType: NotificationEventType
  /** The instance's version once the change is stored (1 for a new instance). */
  version: number
  at: Date
}

/**
 * The JSON body a receiver gets, fixed when the change is stored, for each delivery id: the change
 * is serialized once and each body only puts its delivery id in front.
 */
export function webhookBodies(change: OutboxChange): (deliveryId: string) => string {
  const { processInstance } = change.state
  const task = newestOpenTask(processInstance.tasks)
  const rest = JSON.stringify({
    eventType: change.eventType,
    occurredAt: change.at.toISOString(),
    organizationId: processInstance.organizationId,
    appId: processInstance.appId,
    processId: processInstance.processId,
    processInstance,
    ...(task ? { task } : {}),
  })
  return (deliveryId) => `{"deliveryId":${JSON.stringify(deliveryId)},${rest.slice(1)}`
}

export function orderKeyOf(subscriptionId: string, processInstanceId: string): string {
  return `${subscriptionId} ${processInstanceId}`
}

export class WebhookOutbox {
  private readonly listeners: Array<() => void> = []

  constructor(
    private readonly subscriptions: Collection<StoredWebhookSubscription>,
    private readonly caches?: CacheRegistry,
    private readonly newId: () => string = randomUUID,
  ) {}

  /** The lookup every change makes: the tenant's subscriptions to the event. */
  async ensureIndexes(): Promise<void> {
    await this.subscriptions.createIndex({ organizationId: 1, appId: 1, events: 1 }, { name: 'engine_webhook_subscriptions_tenant' })
  }

  /** The subscriptions the change's event goes to. */
  async subscribersOf(change: Pick<OutboxChange, 'state' | 'eventType'>): Promise<StoredWebhookSubscription[]> {
    const { organizationId, appId, processId } = change.state.processInstance
    const subscribed = await this.tenantSubscriptions({ organizationId, appId })
    return subscribed.filter(
      ({ events, processIds }) => events.includes(change.eventType) && (processIds.length === 0 || processIds.includes(processId)),
    )
  }

  /**
   * The tenant's subscriptions, oldest first. Every change asks, and a tenant's subscriptions are
   * few and rarely written: they are kept in the `webhookSubscriptions` cache, which the gateway's
   * subscription writes evict (services/gateway/subscriptions/service.ts).
   */
  private async tenantSubscriptions(tenant: { organizationId: string; appId: string }): Promise<readonly StoredWebhookSubscription[]> {
    const read = async (): Promise<readonly StoredWebhookSubscription[]> =>
      deepFreeze(await this.subscriptions.find(tenant, { sort: { createdAt: 1 } }).toArray())
    if (!this.caches) return read()
    return readThrough(this.caches, WEBHOOK_SUBSCRIPTIONS_CACHE, tenantKey(tenant), read, { maxAgeMs: WRITTEN_ELSEWHERE_MAX_AGE_MS })
  }

  async findSubscription(subscriptionId: string): Promise<StoredWebhookSubscription | null> {
    return this.subscriptions.findOne({ _id: subscriptionId })
  }

  /** The delivery records of a change, as writes for its atomic batch (none without a matching subscription). */
  async writesFor(change: OutboxChange): Promise<AtomicWrite[]> {
    const subscribers = await this.subscribersOf(change)
    if (subscribers.length === 0) return []
    const { processInstance } = change.state
    const bodyOf = webhookBodies(change)
    return subscribers.map((subscription) => {
      const deliveryId = this.newId()
      const delivery: StoredWebhookDelivery = {
        _id: deliveryId,
        subscriptionId: subscription._id,
        organizationId: processInstance.organizationId,
        appId: processInstance.appId,
        processId: processInstance.processId,
        processInstanceId: processInstance.processInstanceId,
        eventType: change.eventType,
        orderKey: orderKeyOf(subscription._id, processInstance.processInstanceId),
        sequence: change.version,
        body: bodyOf(deliveryId),
        status: 'pending',
        tries: 0,
        dueAt: change.at,
        createdAt: change.at,
      }
      return { collection: Collections.webhookDeliveries, kind: 'insertOne', doc: { ...delivery } } satisfies AtomicWrite
    })
  }

  /** Called with no argument once deliveries were stored (the delivery worker sends them without waiting for its next poll). */
  onStored(listener: () => void): void {
    this.listeners.push(listener)
  }

  /** Tells the listeners that a stored change brought deliveries. */
  stored(): void {
    for (const listener of this.listeners) listener()
  }
}

export function webhookOutbox(store: Store, caches?: CacheRegistry): WebhookOutbox {
  return new WebhookOutbox(store.collection<StoredWebhookSubscription>(Collections.webhookSubscriptions), caches)
}

export default repositoryPlugin('webhookOutbox', ({ store, caches }) => webhookOutbox(store, caches), {
  name: 'webhook-outbox',
  dependencies: ['caches'],
})
