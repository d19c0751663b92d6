/** `POST /external/batchjob/retry`: requeues the recently failed batch jobs. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { retryFailedBatchJobs } from '../../../openapi/generated/engine-routes.js'
import { routeFrom } from '../../../plugins/server/route.js'
import { retryFailedJobs } from './service.js'

async function batchRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(retryFailedBatchJobs),
    handler: async (request) => {
      const tenant = request.actor ? { appId: request.actor.appId, organizationId: request.actor.organizationId } : null
      const { requeued, message } = await retryFailedJobs(fastify.batchJobs, request.body, tenant, new Date())
      if (requeued > 0) fastify.batchWorker.wake()
      request.log.info({ requeued }, message)
      return { message }
    },
  })
}

export default fp(batchRoutes, { name: 'engine-batch-routes', dependencies: ['batch-jobs', 'batch-worker', 'identity', 'errors'] })
