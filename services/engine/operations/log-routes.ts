/**
 * `GET /internal/serviceLog`: this engine's log lines of one client as Server-Sent Events, the feed
 * a gateway in another process relays (its LOG_SOURCE_WFM_URL) after checking the caller's studio
 * token. The same stream code as the gateway's own log endpoint.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { streamEngineLog } from '../../../openapi/generated/engine-routes.js'
import { LogStreams, ringFeed } from '../../../plugins/logging/event-stream.js'
import type { LogRing } from '../../../plugins/logging/ring.js'
import { routeFrom } from '../../../lib/server/route.js'

export interface EngineLogRoutesOptions {
  /** The engine's ring; undefined when this process keeps no engine log lines (500 wm5001). */
  ring: LogRing | undefined
  heartbeatMs: number
}

async function engineLogRoutes(fastify: FastifyInstance, options: EngineLogRoutesOptions): Promise<void> {
  const fail: ErrorFactory<EngineErrorCode> = fastify.fail
  const streams = new LogStreams()
  fastify.addHook('preClose', async () => streams.closeAll())
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(streamEngineLog),
    handler: async (request, reply) => {
      if (!options.ring) throw fail('wm5001')
      streams.serve(request, reply, ringFeed(options.ring, request.headers.lplogclientid), options.heartbeatMs)
      return reply
    },
  })
}

export default fp(engineLogRoutes, { name: 'engine-log-routes', dependencies: ['errors'] })
