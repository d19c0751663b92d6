/**
 * The webhook subscription endpoints (docs/webhooks.md), admin endpoints like users and models: a
 * tenant admin (jwt mode) acts only inside its own tenant (adminTenantOf), ADMIN_TOKEN in the tenant
 * the request names.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  createSubscription,
  deleteSubscription,
  listSubscriptionDeliveries,
  listSubscriptions,
  redeliverWebhook,
} from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'
import { createHandler, deleteHandler } from '../admin/writes.js'

const DEFAULT_DELIVERY_PAGE = 50

async function subscriptionRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.route({ ...routeFrom(createSubscription), handler: createHandler(fastify, fastify.subscriptions) })
  app.route({
    ...routeFrom(listSubscriptions),
    handler: async (request, reply) => {
      const { organizationId, appId } = request.query
      return reply.envelope(
        await fastify.subscriptions.list(fastify.adminTenantOf(request, request.query, 'query') ?? { organizationId, appId }),
      )
    },
  })
  app.route({ ...routeFrom(deleteSubscription), handler: deleteHandler(fastify, fastify.subscriptions, 'Subscription deleted') })
  app.route({
    ...routeFrom(listSubscriptionDeliveries),
    handler: async (request, reply) => {
      const { status, limit, cursor, organizationId, appId } = request.query
      const tenant = fastify.adminTenantOf(request, request.query, 'query') ?? { organizationId, appId }
      return reply.envelope(
        await fastify.subscriptions.deliveries(request.params.id, tenant, { status, limit: limit ?? DEFAULT_DELIVERY_PAGE, cursor }),
      )
    },
  })
  app.route({
    ...routeFrom(redeliverWebhook),
    handler: async (request, reply) => {
      const { deliveryId, organizationId, appId } = request.body
      const tenant = fastify.adminTenantOf(request, request.body, 'body') ?? { organizationId, appId }
      await fastify.subscriptions.redeliver(request.params.id, deliveryId, tenant)
      return reply.envelope({ message: 'Delivery queued' })
    },
  })
}

export default fp(subscriptionRoutes, { name: 'subscription-routes', dependencies: ['subscription-service', 'envelope', 'identity'] })
