/**
 * The webhook outbox (docs/webhooks.md): for a change about to be stored, one delivery record per
 * subscription of the instance's tenant whose `events` (and `processIds`, when it has any) match the
 * change's event, as writes that go into the change's own atomic batch. A crash before the commit
 * leaves neither the change nor its deliveries, after it both: a delivery can be late, never lost.
 * Every event type the notifications produce is delivered, whatever types there are.
 */
import { randomUUID } from 'node:crypto'
import type { NotificationEventType } from '../../../../openapi/generated/schemas.js'
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { AtomicWrite, Collection, Store } from '../../../../store/port.js'
import { Collections, type StoredWebhookDelivery, type StoredWebhookSubscription } from '../../../../store/collections.js'
import { newestOpenTask } from '../notifications/service.js'
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
    private readonly newId: () => string = randomUUID,
  ) {}

  /** The lookup every change makes: the tenant's subscriptions to the event. */
  async ensureIndexes(): Promise<void> {
    await this.subscriptions.createIndex({ organizationId: 1, appId: 1, events: 1 }, { name: 'engine_webhook_subscriptions_tenant' })
  }

  /** The subscriptions the change's event goes to. */
  async subscribersOf(change: Pick<OutboxChange, 'state' | 'eventType'>): Promise<StoredWebhookSubscription[]> {
    const { organizationId, appId, processId } = change.state.processInstance
    // Every change asks, so the filter stays one the embedded store matches without compiling a query
    // (an `$or` on processIds cost 5% of the engine's thread); a tenant's subscriptions to one event are few.
    const subscribed = await this.subscriptions
      .find({ organizationId, appId, events: change.eventType }, { sort: { createdAt: 1 } })
      .toArray()
    return subscribed.filter(({ processIds }) => processIds.length === 0 || processIds.includes(processId))
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

export function webhookOutbox(store: Store): WebhookOutbox {
  return new WebhookOutbox(store.collection<StoredWebhookSubscription>(Collections.webhookSubscriptions))
}

export default repositoryPlugin('webhookOutbox', ({ store }) => webhookOutbox(store), { name: 'webhook-outbox' })
