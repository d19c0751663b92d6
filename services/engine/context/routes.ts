/** `POST /context` (start or open a workflow) and `POST /context/activity` (its log, newest first). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { listContextActivity, openContext } from '../../../openapi/generated/engine-routes.js'
import type { ContextRequest } from '../../../openapi/generated/schemas.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'
import { ContextService } from './service.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'

async function contextRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new ContextService(engineDependencies(fastify))
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()

  typed.route({
    ...routeFrom(openContext),
    // Only a start (no processInstanceId) is made idempotent by an idempotency-key.
    ...fastify.idempotentStarts.hooks((request) => !(request.body as ContextRequest).processInstanceId),
    // The route requires the user header: identity has resolved the actor.
    handler: async (request) =>
      service.open(requireActor(request), request.body, request.headers.additionalheaders, request.idempotentStart?.processInstanceId),
  })

  typed.route({
    ...routeFrom(listContextActivity),
    handler: async (request) => {
      const stored = await fastify.processInstances.loadFor(requireActor(request), request.body.processInstanceId)
      return fastify.activities.listFor(stored._id, stored.activityLog)
    },
  })
}

export default fp(contextRoutes, {
  name: 'engine-context-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'idempotent-starts', 'identity'],
})
