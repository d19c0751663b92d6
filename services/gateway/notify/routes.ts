/** `POST /notify`: the gateway's direct notification upsert. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { upsertNotification } from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../plugins/server/route.js'

async function notifyRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(upsertNotification),
    handler: async (request, reply) => {
      await fastify.notificationUpserts.upsert(request.body)
      return reply.envelope({ message: 'notified' })
    },
  })
}

export default fp(notifyRoutes, { name: 'notify-routes', dependencies: ['notification-upserts', 'envelope'] })
