/** Gateway `GET /healthcheck` (name, version, modify, time, error?) and `GET /liveness` (time only). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getGatewayHealthcheck, getGatewayLiveness } from '../../../openapi/generated/gateway-routes.js'
import { packageJsonPath } from '../../../lib/server/paths.js'
import { routeFrom } from '../../../lib/server/route.js'
import { readVersionInfo } from '../../../lib/server/version-info.js'

export const GATEWAY_SERVICE_NAME = 'workflow-gateway'

export interface GatewayHealthOptions {
  /** Where the version comes from; tests point it elsewhere to see a read failure reported. */
  packageJsonPath?: string
}

async function healthRoutes(fastify: FastifyInstance, options: GatewayHealthOptions): Promise<void> {
  const versionInfo = await readVersionInfo(options.packageJsonPath ?? packageJsonPath)
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.route({
    ...routeFrom(getGatewayHealthcheck),
    handler: async (_request, reply) => reply.envelope({ name: GATEWAY_SERVICE_NAME, ...versionInfo, time: new Date().toISOString() }),
  })
  app.route({
    ...routeFrom(getGatewayLiveness),
    handler: async (_request, reply) => reply.envelope({ time: new Date().toISOString() }),
  })
}

export default fp(healthRoutes, { name: 'gateway-health', dependencies: ['envelope'] })
