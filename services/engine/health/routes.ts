/** Engine `GET /liveness`: time, name, the apps that have models, version, batch job counts — errors reported, not thrown. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getEngineLiveness } from '../../../openapi/generated/engine-routes.js'
import type { BatchJobCounts } from '../../../openapi/generated/schemas.js'
import { packageJsonPath } from '../../../lib/server/paths.js'
import { routeFrom } from '../../../lib/server/route.js'
import { readVersionInfo } from '../../../lib/server/version-info.js'
import type { Store } from '../../../store/port.js'
import { batchJobRepository } from '../batch/repository.js'

export const ENGINE_SERVICE_NAME = 'workflow-engine'
export const MODELS_COLLECTION = 'models'

/** The app ids that own models, as a string; the problem as text when the store cannot answer. */
export async function describeApps(store: Store): Promise<string> {
  try {
    const groups = await store
      .collection(MODELS_COLLECTION)
      .aggregate<{ _id: unknown }>([{ $group: { _id: '$appId' } }, { $sort: { _id: 1 } }])
      .toArray()
    const appIds = groups.map((group) => group._id).filter((id): id is string => typeof id === 'string')
    return appIds.length > 0 ? JSON.stringify(appIds) : 'No apps found'
  } catch (error) {
    return `Cannot read apps: ${(error as Error).message}`
  }
}

/** Batch jobs by status; left out of the answer (which must not fail) when the store cannot count them. */
export async function countBatchJobs(store: Store): Promise<{ batchJobs?: BatchJobCounts }> {
  try {
    return { batchJobs: await batchJobRepository(store).countByStatus() }
  } catch {
    return {}
  }
}

async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  const versionInfo = await readVersionInfo(packageJsonPath)
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(getEngineLiveness),
    handler: async () => ({
      time: new Date().toISOString(),
      name: ENGINE_SERVICE_NAME,
      appList: await describeApps(fastify.store),
      versionInfo,
      ...(await countBatchJobs(fastify.store)),
    }),
  })
}

export default fp(healthRoutes, { name: 'engine-health', dependencies: ['store'] })
