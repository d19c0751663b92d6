/** `GET /notifications/:appId` (what the user may see, newest first, a page at a time) and `POST /notify/send`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { listNotifications, sendNotification } from '../../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../../plugins/identity/actor.js'
import { routeFrom } from '../../../../lib/server/route.js'
import { DEFAULT_PAGE_SIZE, resendNotification } from './service.js'

async function notificationRoutes(fastify: FastifyInstance): Promise<void> {
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()

  typed.route({
    ...routeFrom(listNotifications),
    // The route requires the user header: identity has resolved the actor.
    handler: async (request, reply) => {
      const page = await fastify.notifications.list(
        requireActor(request),
        request.params.appId,
        request.query.limit ?? DEFAULT_PAGE_SIZE,
        request.query.cursor,
      )
      if (page.nextCursor) reply.header('x-next-cursor', page.nextCursor)
      return page.records
    },
  })

  const resendDependencies = {
    contexts: fastify.contexts,
    models: fastify.processModels,
    environments: fastify.runEnvironments,
    notifications: fastify.notifications,
    authorization: fastify.authorization,
    fail: fastify.fail,
  }
  typed.route({
    ...routeFrom(sendNotification),
    handler: async (request) => {
      await resendNotification(resendDependencies, requireActor(request), request.body, request.headers.additionalheaders)
      return { status: 'OK' as const }
    },
  })
}

export default fp(notificationRoutes, {
  name: 'engine-notification-routes',
  dependencies: [
    'notifications-service',
    'contexts-repository',
    'process-models',
    'run-environments',
    'authorization',
    'identity',
    'errors',
  ],
})
