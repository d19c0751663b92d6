/**
 * Engine `GET /liveness`: `{ status: 'ok', name, time }` and nothing more. Anyone who reaches the
 * engine port may call it, so it reads no store and names no app, tenant or job: whether the store
 * answers is `/readiness`, batch job counts are in `/metrics`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getEngineLiveness } from '../../../openapi/generated/engine-routes.js'
import { routeFrom } from '../../../lib/server/route.js'

export const ENGINE_SERVICE_NAME = 'workflow-engine'

async function healthRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(getEngineLiveness),
    handler: async () => ({ status: 'ok' as const, name: ENGINE_SERVICE_NAME, time: new Date().toISOString() }),
  })
}

export default fp(healthRoutes, { name: 'engine-health' })
