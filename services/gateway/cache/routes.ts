/** `GET /external/cache/:cacheType/:cacheTarget/evict`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { evictCache } from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'

async function cacheRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(evictCache),
    handler: async (request, reply) => {
      const tenant = fastify.adminTenantOf(request, {}, 'query')
      await fastify.cacheEviction.evict(request.params.cacheType, request.params.cacheTarget, request.query.id, tenant)
      return reply.envelope({ status: 'OK' })
    },
  })
}

export default fp(cacheRoutes, { name: 'cache-routes', dependencies: ['cache-eviction', 'envelope', 'identity'] })
