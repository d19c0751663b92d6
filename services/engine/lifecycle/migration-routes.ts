/** `POST /external/process/migrate`: running instances to another model version (admins). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { migrateProcessInstances } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function migrationRoutes(fastify: FastifyInstance): Promise<void> {
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(migrateProcessInstances),
    handler: async (request) => fastify.migrations.migrate(requireActor(request), request.body, request.headers.additionalheaders),
  })
}

export default fp(migrationRoutes, { name: 'engine-migration-routes', dependencies: ['migration-service', 'identity', 'errors'] })
