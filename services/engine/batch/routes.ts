/** `POST /external/batchjob/retry`: requeues the recently failed batch jobs. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { retryFailedBatchJobs } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/plugin.js'
import { routeFrom } from '../../../lib/server/route.js'
import { retryFailedJobs } from './service.js'

async function batchRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(retryFailedBatchJobs),
    handler: async (request) => {
      // The route requires the user header; requeueing the tenant's jobs is acting for others.
      const actor = requireActor(request)
      fastify.authorization.assertMayActForOthers(actor, 'retry batch jobs')
      const tenant = { appId: actor.appId, organizationId: actor.organizationId }
      const { requeued, message } = await retryFailedJobs(fastify.batchJobs, request.body, tenant, fastify.clock())
      if (requeued > 0) fastify.batchWorker.wake()
      request.log.info({ requeued }, message)
      return { message }
    },
  })
}

export default fp(batchRoutes, { name: 'engine-batch-routes', dependencies: ['batch-jobs', 'batch-worker', 'authorization', 'identity', 'errors'] })
