/** `POST /external/data/search/:collection`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { searchDataCollection } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'
import type { DataLimits } from '../flow-host/data-filter.js'
import { DataSearchService } from './service.js'

export interface DataRoutesOptions {
  limits: DataLimits
}

async function dataRoutes(fastify: FastifyInstance, options: DataRoutesOptions): Promise<void> {
  const service = new DataSearchService(fastify.dataCollections, fastify.fail, options.limits)
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(searchDataCollection),
    // The route requires the user header: identity has resolved the actor.
    handler: async (request) => service.search(requireActor(request), request.params.collection, request.body),
  })
}

export default fp(dataRoutes, { name: 'engine-data-routes', dependencies: ['data-collections-repository', 'identity', 'errors'] })
