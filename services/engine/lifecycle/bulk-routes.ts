/** `POST /external/process/bulk`: queues a bulk operation for the batch worker (docs/reference/lifecycle.md#bulk-operations). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { startBulkOperation } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function bulkRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(startBulkOperation),
    handler: async (request) => {
      // The route requires the user header; changing many instances is acting for others.
      const actor = requireActor(request)
      fastify.authorization.assertMayActForOthers(actor, 'run bulk operations')
      const accepted = await fastify.bulkOperations.enqueue(actor, request.body, fastify.clock())
      fastify.batchWorker.wake()
      return accepted
    },
  })
}

export default fp(bulkRoutes, {
  name: 'engine-bulk-routes',
  dependencies: ['bulk-operations', 'batch-worker', 'authorization', 'identity', 'errors', 'clock'],
})
