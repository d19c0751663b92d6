/**
 * Who reads the tenant-scoped directories (users, models) and so which tenant a read answers for
 * (docs/reference/identity.md#admin-endpoints): a request presenting ADMIN_TOKEN reads every tenant; an identified user (the
 * `user` header) only their own; anyone else is anonymous, which only development allows, and
 * each read says what it then needs.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { TenantScope } from './repository.js'
import type { Tenant } from '../../../store/tenant.js'

/** A tenant in full: both parts known. */
export type { Tenant } from '../../../store/tenant.js'

export type Reader = { kind: 'admin' } | { kind: 'user'; tenant: Tenant } | { kind: 'anonymous' }

export function readerOf(fastify: Pick<FastifyInstance, 'presentsAdminToken'>, request: FastifyRequest): Reader {
  if (fastify.presentsAdminToken(request)) return { kind: 'admin' }
  if (request.actor) return { kind: 'user', tenant: { organizationId: request.actor.organizationId, appId: request.actor.appId } }
  return { kind: 'anonymous' }
}

/** Does the request's own scope (query) name a tenant other than the reader's? */
export function namesOtherTenant(tenant: Tenant, asked: TenantScope): boolean {
  return (
    (asked.appId !== undefined && asked.appId !== tenant.appId) ||
    (asked.organizationId !== undefined && asked.organizationId !== tenant.organizationId)
  )
}
