/**
 * `POST /external/batchjob/retry` (requeues the recently failed batch jobs), `POST
 * /external/batchjob/list` and `GET /external/batchjob/:jobId` (the tenant's jobs, for operators).
 * All three act on the whole tenant's jobs: role `admin` or a system user only.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { getBatchJob, listBatchJobs, retryFailedBatchJobs } from '../../../../openapi/generated/engine-routes.js'
import { type Actor, requireActor } from '../../../../plugins/identity/actor.js'
import { routeFrom } from '../../../../lib/server/route.js'
import { decodeJobCursor, isTenantJob, jobSummary, listJobs } from './job-list.js'
import { retryFailedJobs } from './service.js'

async function batchRoutes(fastify: FastifyInstance): Promise<void> {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  /** The acting user (every route requires the user header), once it may act on the whole tenant's jobs. */
  const operator = (request: FastifyRequest, action: string): Actor => {
    const actor = requireActor(request)
    fastify.authorization.assertMayActForOthers(actor, action)
    return actor
  }
  app.route({
    ...routeFrom(retryFailedBatchJobs),
    handler: async (request) => {
      // Requeueing the tenant's jobs is acting for others.
      const actor = operator(request, 'retry batch jobs')
      const tenant = { appId: actor.appId, organizationId: actor.organizationId }
      const { requeued, message } = await retryFailedJobs(fastify.batchJobs, request.body, tenant, fastify.clock())
      if (requeued > 0) fastify.batchWorker.wake()
      request.log.info({ requeued }, message)
      return { message }
    },
  })
  app.route({
    ...routeFrom(listBatchJobs),
    handler: async (request) => {
      const actor = operator(request, 'list batch jobs')
      const { cursor } = request.body
      const after = cursor === undefined ? undefined : decodeJobCursor(cursor)
      if (cursor !== undefined && !after)
        throw fastify.fail('wm4000', { args: ['body.cursor is not a cursor this service issued'], parameters: { field: 'body.cursor' } })
      // The acting user's tenant only, whatever the body names.
      return listJobs(fastify.batchJobs, { appId: actor.appId, organizationId: actor.organizationId }, request.body, after)
    },
  })
  app.route({
    ...routeFrom(getBatchJob),
    handler: async (request) => {
      const actor = operator(request, 'read batch jobs')
      const { jobId } = request.params
      const job = await fastify.batchJobs.findByJobId(jobId)
      // Another tenant's job is as absent as one that never was.
      if (!job || !isTenantJob(job, actor)) throw fastify.fail('wm3150', { args: [jobId], parameters: { jobId } })
      return jobSummary(job)
    },
  })
}

export default fp(batchRoutes, {
  name: 'engine-batch-routes',
  dependencies: ['batch-jobs', 'batch-worker', 'authorization', 'identity', 'errors', 'clock'],
})
