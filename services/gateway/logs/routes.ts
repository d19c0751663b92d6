/** `GET /cloud/serviceLog/:service`: a client's log lines as Server-Sent Events. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { streamServiceLog } from '../../../openapi/generated/gateway-routes.js'
import type { Config } from '../../../lib/config/config.js'
import { LogStreams } from '../../../plugins/logging/event-stream.js'
import type { LogRings } from '../../../plugins/logging/ring.js'
import { routeFrom } from '../../../lib/server/route.js'
import { LogStreamService } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The open log streams of this gateway (ended when it closes). */
    logStreams: LogStreams
  }
}

export interface LogRoutesOptions {
  config: Pick<Config, 'deploymentEnv' | 'studioTokenSecret' | 'logSourceUrls' | 'logHeartbeatMs'>
  /** The rings of the services that run in this process. */
  rings: LogRings
}

async function logRoutes(fastify: FastifyInstance, options: LogRoutesOptions): Promise<void> {
  const service = new LogStreamService(options.config, options.rings, fastify.fail)
  const streams = new LogStreams()
  fastify.decorate('logStreams', streams)
  // Before the server waits for open connections to end: an event stream never ends by itself.
  fastify.addHook('preClose', async () => streams.closeAll())
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(streamServiceLog),
    handler: async (request, reply) => {
      const feed = await service.open({ service: request.params.service, headers: request.headers })
      streams.serve(request, reply, feed, options.config.logHeartbeatMs)
      return reply
    },
  })
}

export default fp(logRoutes, { name: 'log-routes', dependencies: ['errors'] })
