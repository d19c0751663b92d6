/**
 * The user endpoints (docs/reference/gateway.md#users), straight from the OpenAPI operations. A tenant
 * admin (jwt mode) reads and changes only the users of its own tenant (adminTenantOf). `GET /me` is
 * no admin endpoint: any identified user reads itself.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import {
  createUser,
  deleteUser,
  getCurrentUser,
  getUserById,
  listWorkflowUsers,
  updateUser,
} from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { createHandler, deleteHandler } from '../admin/writes.js'
import { namesOtherTenant, readerOf } from './reader.js'

async function userRoutes(fastify: FastifyInstance): Promise<void> {
  const fail: ErrorFactory<GatewayErrorCode> = fastify.fail
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>()
  app.route({ ...routeFrom(createUser), handler: createHandler(fastify, fastify.users) })
  app.route({
    ...routeFrom(updateUser),
    handler: async (request, reply) => {
      const tenant = fastify.adminTenantOf(request, request.body, 'body')
      if (tenant && request.body.userId !== undefined && (await fastify.users.get(request.body.userId, tenant)) === null) {
        throw fail('fm4030', { args: ['a tenant admin updates only the users of its own tenant'], parameters: { field: 'body.userId' } })
      }
      return reply.envelope(await fastify.users.update(tenant ? { ...request.body, ...tenant } : request.body))
    },
  })
  app.route({ ...routeFrom(deleteUser), handler: deleteHandler(fastify, fastify.users, 'User deleted successfully') })
  // Reads answer the reader's tenant only (reader.ts); a query naming another tenant finds nothing.
  app.route({
    ...routeFrom(getUserById),
    handler: async (request, reply) => {
      // A tenant admin's token naming another tenant is refused (403), as on every admin route.
      fastify.adminTenantOf(request, request.query, 'query')
      const reader = readerOf(fastify, request)
      if (reader.kind !== 'user') return reply.envelope(await fastify.users.get(request.params.userId, request.query))
      return reply.envelope(
        namesOtherTenant(reader.tenant, request.query) ? null : await fastify.users.get(request.params.userId, reader.tenant),
      )
    },
  })
  app.route({
    ...routeFrom(listWorkflowUsers),
    handler: async (request, reply) => {
      fastify.adminTenantOf(request, request.query, 'query')
      const reader = readerOf(fastify, request)
      if (reader.kind === 'admin') return reply.envelope(await fastify.users.list(request.query))
      if (reader.kind === 'user')
        return reply.envelope(namesOtherTenant(reader.tenant, request.query) ? [] : await fastify.users.list(reader.tenant))
      // Nobody identified (development): one named tenant, never every tenant's users.
      const { appId, organizationId } = request.query
      if (appId === undefined || organizationId === undefined) {
        const field = appId === undefined ? 'query.appId' : 'query.organizationId'
        throw fail('fm4000', { args: [`${field} is required without a user or the admin token`], parameters: { field } })
      }
      return reply.envelope(await fastify.users.list({ appId, organizationId }))
    },
  })
  app.route({
    ...routeFrom(getCurrentUser),
    handler: async (request, reply) => {
      const { userId, fullName, roles, swimlanes, unit, organizationId, appId, isSystemUser } = requireActor(request)
      return reply.envelope({ userId, fullName, roles, swimlanes, ...(unit ? { unit } : {}), organizationId, appId, isSystemUser })
    },
  })
}

export default fp(userRoutes, { name: 'user-routes', dependencies: ['user-service', 'envelope', 'identity', 'errors'] })
