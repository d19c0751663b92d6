/** `POST /external/process/purge`: removes ended instances for good (purge.ts). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { purgeProcessInstances } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function purgeRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(purgeProcessInstances),
    // The route requires the user header: identity has resolved the actor before the handler runs.
    handler: async (request) => fastify.instancePurge.request(requireActor(request), request.body),
  })
}

export default fp(purgeRoutes, { name: 'engine-purge-routes', dependencies: ['instance-purge', 'identity', 'errors'] })
