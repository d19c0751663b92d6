/**
 * Webhook subscriptions (docs/webhooks.md) as the gateway's admin endpoints serve them: a URL is
 * accepted only when the destination rules let it through now (the same rules, and code, as flow
 * functions' outbound calls, with WEBHOOK_ALLOWED_HOSTS); the engine checks it again at every try.
 * The secret, generated when not given, is answered once and never listed.
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type {
  CreatedSubscription,
  SubscriptionInput,
  SubscriptionSummary,
  WebhookDelivery,
  WebhookDeliveryPage,
  WebhookDeliveryStatus,
} from '../../../openapi/generated/schemas.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { evictWebhookSubscriptions } from '../../../plugins/cache/written-elsewhere.js'
import { type DestinationGuard, webhookDestinationGuard } from '../../../lib/outbound/destination-guard.js'
import type { StoredWebhookDelivery, StoredWebhookSubscription } from '../../../store/collections.js'
import type { DeliveryPosition, SubscriptionRepository, TenantFilter } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    subscriptions: Subscriptions
  }
}

/** 32 random bytes: 43 base64url characters. */
export function generateSecret(): string {
  return randomBytes(32).toString('base64url')
}

export function summaryOf(subscription: StoredWebhookSubscription): SubscriptionSummary {
  return {
    subscriptionId: subscription._id,
    url: subscription.url,
    events: subscription.events,
    processIds: subscription.processIds,
    organizationId: subscription.organizationId,
    appId: subscription.appId,
    createdAt: subscription.createdAt.toISOString(),
  }
}

export function deliveryOf(delivery: StoredWebhookDelivery): WebhookDelivery {
  return {
    deliveryId: delivery._id,
    eventType: delivery.eventType,
    processInstanceId: delivery.processInstanceId,
    status: delivery.status,
    tries: delivery.tries,
    lastStatusCode: delivery.lastStatusCode ?? null,
    lastError: delivery.lastError ?? null,
    createdAt: delivery.createdAt.toISOString(),
    deliveredAt: delivery.deliveredAt?.toISOString() ?? null,
  }
}

export function encodeDeliveryCursor(position: DeliveryPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt.toISOString(), position.deliveryId])).toString('base64url')
}

/** The position a cursor names, or undefined when it is not one this service issued. */
export function decodeDeliveryCursor(cursor: string): DeliveryPosition | undefined {
  try {
    const decoded: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'))
    if (!Array.isArray(decoded) || decoded.length !== 2 || !decoded.every((part) => typeof part === 'string')) return undefined
    const createdAt = new Date(decoded[0] as string)
    return Number.isNaN(createdAt.getTime()) ? undefined : { createdAt, deliveryId: decoded[1] as string }
  } catch {
    return undefined
  }
}

export interface DeliveryQuery {
  status?: WebhookDeliveryStatus | undefined
  limit: number
  cursor?: string | undefined
}

export class Subscriptions {
  constructor(
    private readonly repository: SubscriptionRepository,
    private readonly guard: DestinationGuard,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
    /** Drops the engines' cached subscriptions of the tenant before a write is answered. */
    private readonly subscriptionsChanged: (tenant: TenantFilter) => Promise<void>,
  ) {}

  /** Stores a subscription whose URL passes the destination rules (400 fm3050 otherwise, nothing stored). */
  async create(input: SubscriptionInput, now: Date = new Date()): Promise<CreatedSubscription> {
    const refused = await this.guard.urlRefusal(input.url)
    if (refused !== undefined) throw this.fail('fm3050', { args: [refused], parameters: { field: 'body.url' } })
    const subscription: StoredWebhookSubscription = {
      _id: randomUUID(),
      organizationId: input.organizationId,
      appId: input.appId,
      url: input.url,
      events: input.events,
      processIds: input.processIds ?? [],
      secret: input.secret ?? generateSecret(),
      createdAt: now,
    }
    await this.repository.insert(subscription)
    await this.subscriptionsChanged(subscription)
    return { ...summaryOf(subscription), secret: subscription.secret }
  }

  async list(tenant: Required<TenantFilter>): Promise<SubscriptionSummary[]> {
    return (await this.repository.list(tenant)).map(summaryOf)
  }

  /** 404 fm3051 when the tenant has no such subscription. */
  async delete(subscriptionId: string, tenant: TenantFilter): Promise<void> {
    if (!(await this.repository.delete(subscriptionId, tenant))) throw this.notFound(subscriptionId)
    await this.subscriptionsChanged(tenant)
  }

  async deliveries(subscriptionId: string, tenant: TenantFilter, query: DeliveryQuery): Promise<WebhookDeliveryPage> {
    const after = query.cursor === undefined ? undefined : decodeDeliveryCursor(query.cursor)
    if (query.cursor !== undefined && !after)
      throw this.fail('fm4000', {
        args: ['querystring.cursor is not a cursor this service issued'],
        parameters: { field: 'querystring.cursor' },
      })
    await this.existing(subscriptionId, tenant)
    const found = await this.repository.deliveryPage(subscriptionId, query.status, query.limit + 1, after)
    const page = found.slice(0, query.limit)
    const last = page[page.length - 1]
    return {
      items: page.map(deliveryOf),
      ...(found.length > query.limit && last
        ? { nextCursor: encodeDeliveryCursor({ createdAt: last.createdAt, deliveryId: last._id }) }
        : {}),
    }
  }

  /** Queues the delivery again (404 fm3051 / fm3052 when unknown, 409 fm3053 while it is being tried). */
  async redeliver(subscriptionId: string, deliveryId: string, tenant: TenantFilter, now: Date = new Date()): Promise<void> {
    await this.existing(subscriptionId, tenant)
    if (await this.repository.requeue(subscriptionId, deliveryId, now)) return
    const delivery = await this.repository.findDelivery(subscriptionId, deliveryId)
    if (!delivery) throw this.fail('fm3052', { args: [deliveryId], parameters: { field: 'body.deliveryId' } })
    throw this.fail('fm3053', { args: [deliveryId], parameters: { field: 'body.deliveryId' } })
  }

  private async existing(subscriptionId: string, tenant: TenantFilter): Promise<StoredWebhookSubscription> {
    const subscription = await this.repository.find(subscriptionId, tenant)
    if (!subscription) throw this.notFound(subscriptionId)
    return subscription
  }

  private notFound(subscriptionId: string) {
    return this.fail('fm3051', { args: [subscriptionId], parameters: { field: 'params.id' } })
  }
}

export interface SubscriptionServiceOptions {
  /** WEBHOOK_ALLOWED_HOSTS. */
  allowedHosts: readonly string[]
  /** The engine's port: like the gateway's own, never a webhook destination. */
  enginePort: number
}

async function subscriptionServicePlugin(fastify: FastifyInstance, options: SubscriptionServiceOptions): Promise<void> {
  const guard = webhookDestinationGuard(options.allowedHosts, fastify.server, options.enginePort)
  const subscriptionsChanged = (tenant: TenantFilter): Promise<void> => evictWebhookSubscriptions(fastify.store, tenant)
  fastify.decorate('subscriptions', new Subscriptions(fastify.subscriptionRepository, guard, fastify.fail, subscriptionsChanged))
}

export default fp(subscriptionServicePlugin, {
  name: 'subscription-service',
  dependencies: ['subscription-repository', 'errors', 'store'],
})
