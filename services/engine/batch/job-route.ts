/**
 * `GET /external/batchjob/:jobId`: one batch job of the caller's tenant, with a bulk operation's
 * progress. (The observability work adds the batch-job list and get routes too; at merge one of
 * the two get routes stays, with `progress`.)
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getBatchJob } from '../../../openapi/generated/engine-routes.js'
import type { BatchJobView } from '../../../openapi/generated/schemas.js'
import { requireActor } from '../../../plugins/identity/plugin.js'
import { routeFrom } from '../../../lib/server/route.js'
import type { StoredBatchJob } from '../../../store/collections.js'

export function batchJobView(job: StoredBatchJob): BatchJobView {
  const due = job.status === 'waiting' || job.status === 'retrying'
  return {
    jobId: job.jobId,
    kind: job.kind,
    status: job.status,
    tryCount: job.tryCount,
    ...(due ? { nextRunAt: job.dueAt.toISOString() } : {}),
    ...(job.lastError === undefined ? {} : { lastError: job.lastError }),
    createdAt: job.createdAt.toISOString(),
    updatedAt: job.updatedAt.toISOString(),
    ...(job.progress === undefined ? {} : { progress: job.progress }),
  }
}

async function batchJobRoute(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(getBatchJob),
    handler: async (request) => {
      const actor = requireActor(request)
      fastify.authorization.assertMayActForOthers(actor, 'read batch jobs')
      const job = await fastify.batchJobs.findByJobId(request.params.jobId)
      // Another tenant's job is not found, as an unknown one.
      if (!job || job.appId !== actor.appId || (job.organizationId ?? '') !== actor.organizationId) {
        throw fastify.fail('wm3144', { args: [request.params.jobId], parameters: { jobId: request.params.jobId } })
      }
      return batchJobView(job)
    },
  })
}

export default fp(batchJobRoute, { name: 'engine-batch-job-route', dependencies: ['batch-jobs', 'authorization', 'identity', 'errors'] })
