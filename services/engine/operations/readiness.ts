/** Engine `GET /readiness`: 200 while the store answers, else 503 wm5030 with the reason. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getEngineReadiness } from '../../../openapi/generated/engine-routes.js'
import { probeAll, storeProbe } from '../../../lib/server/readiness.js'
import { routeFrom } from '../../../lib/server/route.js'

async function readinessRoutes(fastify: FastifyInstance): Promise<void> {
  const probes = [storeProbe(fastify.store)]
  fastify.route({
    ...routeFrom(getEngineReadiness),
    handler: async () => {
      const outcome = await probeAll(probes)
      if (!outcome.ready) throw fastify.fail('wm5030', { args: [outcome.reason] })
      return { ready: true, checks: outcome.checks }
    },
  })
}

export default fp(readinessRoutes, { name: 'engine-readiness', dependencies: ['store', 'errors'] })
