/**
 * The handlers the admin resources (users, webhook subscriptions) share for creating and deleting:
 * a tenant admin (jwt mode) writes only inside its own tenant (adminTenantOf), ADMIN_TOKEN in the
 * tenant the request names.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { NamedTenant } from '../../../plugins/identity/admin-routes.js'

// The handlers await the reply (a thenable, settled once the answer is sent) where an inline handler
// returns it: the same for Fastify, and a return type that does not depend on the route's schema.

/** The body of a create, in the tenant admin's own tenant when one acts (ADMIN_TOKEN: as sent). */
export function createHandler<Input extends NamedTenant>(fastify: FastifyInstance, resource: { create(input: Input): Promise<unknown> }) {
  return async (request: FastifyRequest & { body: Input }, reply: FastifyReply): Promise<void> => {
    const tenant = fastify.adminTenantOf(request, request.body, 'body')
    await reply.envelope(await resource.create(tenant ? { ...request.body, ...tenant } : request.body))
  }
}

/** A delete of the body's `id`, answered with `message`; the tenant named as on every DELETE (docs/reference/http.md#tenant-fields). */
export function deleteHandler(
  fastify: FastifyInstance,
  resource: { delete(id: string, tenant: NamedTenant): Promise<void> },
  message: string,
) {
  return async (
    request: FastifyRequest & { query: NamedTenant; body: NamedTenant & { id: string } },
    reply: FastifyReply,
  ): Promise<void> => {
    // The tenant travels as query parameters on DELETE; a JSON body may carry it too.
    const named = {
      organizationId: request.query.organizationId ?? request.body.organizationId,
      appId: request.query.appId ?? request.body.appId,
    }
    await resource.delete(request.body.id, fastify.adminTenantOf(request, named, 'query') ?? named)
    await reply.envelope({ message })
  }
}
