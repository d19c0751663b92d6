/** Gateway `GET /readiness`: 200 while the store and the engine's own readiness answer, else 503 fm5030 with the reason. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Agent, request } from 'undici'
import { getGatewayReadiness } from '../../../openapi/generated/gateway-routes.js'
import { type Probe, PROBE_TIMEOUT_MS, probeAll, storeProbe } from '../../../lib/server/readiness.js'
import { routeFrom } from '../../../lib/server/route.js'

export interface GatewayReadinessOptions {
  /** The engine readiness asks after (ENGINE_URL, through ENGINE_SOCKET when set). */
  engine: { url: string; socketPath: string | undefined }
}

/** The engine is ready when its own `/readiness` says 200. */
function engineProbe(engineUrl: string, dispatcher: Agent): Probe {
  return {
    name: 'engine',
    check: async () => {
      const answer = await request(`${engineUrl}/readiness`, {
        dispatcher,
        headersTimeout: PROBE_TIMEOUT_MS,
        bodyTimeout: PROBE_TIMEOUT_MS,
      })
      await answer.body.dump()
      if (answer.statusCode !== 200) throw new Error(`its readiness answered ${answer.statusCode}`)
    },
  }
}

async function readinessRoutes(fastify: FastifyInstance, options: GatewayReadinessOptions): Promise<void> {
  // Connections of its own: readiness must not queue behind proxied requests, nor hold them up.
  const { socketPath } = options.engine
  const dispatcher = new Agent({ connections: 2, connect: { timeout: PROBE_TIMEOUT_MS, ...(socketPath ? { socketPath } : {}) } })
  fastify.addHook('onClose', async () => dispatcher.close())
  const probes = [storeProbe(fastify.store), engineProbe(options.engine.url, dispatcher)]
  fastify.route({
    ...routeFrom(getGatewayReadiness),
    handler: async (_request, reply) => {
      const outcome = await probeAll(probes)
      if (!outcome.ready) throw fastify.fail('fm5030', { args: [outcome.reason] })
      return reply.envelope({ ready: true, checks: outcome.checks })
    },
  })
}

export default fp(readinessRoutes, { name: 'gateway-readiness', dependencies: ['store', 'errors', 'envelope'] })
