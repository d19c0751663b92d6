/**
 * The admin routes (`adminToken` in their operation's OpenAPI `security`;
 * docs/reference/identity.md#admin-endpoints): `Bearer <ADMIN_TOKEN>`, compared in constant time
 * before any JWT check; in jwt mode a token of a user with role `admin` also lets in, limited to
 * that user's tenant (`request.tenantAdmin`, which the admin routes apply with `adminTenantOf`).
 * Without ADMIN_TOKEN, in header mode, they are open (development).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IdentityRequirement } from '../../lib/server/route.js'
import { bearerToken, tokenMatcher } from './admin-token.js'
import type { IdentityCodes } from './codes.js'
import type { HeaderIdentity } from './header-mode.js'
import type { TokenIdentity } from './jwt-mode.js'

/** The tenant a tenant admin (jwt mode, role `admin`) is limited to on the admin routes. */
export interface TenantScope {
  organizationId: string
  appId: string
}

/** The tenant a request names (each part when given). */
export interface NamedTenant {
  organizationId?: string | undefined
  appId?: string | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * On an admin route: the tenant a tenant admin's request is limited to (undefined for
     * ADMIN_TOKEN or an open admin route: any tenant). A request naming another tenant is 403
     * before anything changes; `field` names where it named it (e.g. `body`).
     */
    adminTenantOf(request: FastifyRequest, named: NamedTenant, field: string): TenantScope | undefined
    /** Does the request present the configured ADMIN_TOKEN (false while none is configured)? */
    presentsAdminToken(request: FastifyRequest): boolean
  }
  interface FastifyRequest {
    /**
     * Set when an admin route was let in by a tenant admin's token rather than ADMIN_TOKEN: the one
     * tenant it may act on. Null for ADMIN_TOKEN (every tenant) and for open admin routes.
     */
    tenantAdmin: TenantScope | null
  }
}

export interface AdminRouteOptions {
  codes: IdentityCodes
  /** ADMIN_TOKEN; unset in header mode leaves the admin routes open. */
  adminToken: string | undefined
  /** Jwt mode's check of the bearer token; undefined in header mode. */
  fromToken: TokenIdentity | undefined
  /** Header mode's check of the `user` header, for open admin routes. */
  fromUserHeader: HeaderIdentity
}

/** The onRequest check of an admin route, or undefined when the route is open and needs no actor. */
export type AdminRouteIdentity = (requirement: IdentityRequirement) => ((request: FastifyRequest) => Promise<void>) | undefined

/** Decorates the app with `presentsAdminToken` and `adminTenantOf`, and returns the admin routes' check. */
export function adminRoutes(fastify: FastifyInstance, options: AdminRouteOptions): AdminRouteIdentity {
  const { codes, fromToken, fromUserHeader } = options
  const isAdminToken = options.adminToken === undefined ? undefined : tokenMatcher(options.adminToken)
  fastify.decorateRequest('tenantAdmin', null)
  fastify.decorate('presentsAdminToken', (request: FastifyRequest): boolean => {
    const token = bearerToken(request)
    return isAdminToken !== undefined && token !== undefined && isAdminToken(token)
  })
  fastify.decorate('adminTenantOf', (request: FastifyRequest, named: NamedTenant, field: string): TenantScope | undefined => {
    const scope = request.tenantAdmin
    if (scope === null) return undefined
    for (const key of ['organizationId', 'appId'] as const) {
      const value = named[key]
      if (value !== undefined && value !== scope[key]) {
        throw fastify.fail(codes.forbidden, {
          args: [`a tenant admin acts only inside its own tenant, not ${key} ${value}`],
          parameters: { field: `${field}.${key}` },
        })
      }
    }
    return scope
  })

  const check = async (request: FastifyRequest, requirement: IdentityRequirement): Promise<void> => {
    // ADMIN_TOKEN first, in constant time: the operator's token never goes to a JWT parser.
    if (fastify.presentsAdminToken(request)) return
    if (fromToken === undefined) {
      if (isAdminToken !== undefined)
        throw fastify.fail(codes.adminToken ?? codes.unauthenticated, { parameters: { field: 'headers.authorization' } })
      return fromUserHeader(request, requirement)
    }
    const actor = await fromToken(request)
    if (!actor.roles.includes('admin'))
      throw fastify.fail(codes.forbidden, {
        args: ['admin endpoints need ADMIN_TOKEN or a token of a user with role admin'],
        parameters: { field: 'headers.authorization' },
      })
    request.actor = actor
    request.tenantAdmin = { organizationId: actor.organizationId, appId: actor.appId }
  }
  return (requirement) =>
    isAdminToken === undefined && fromToken === undefined && requirement === 'none' ? undefined : (request) => check(request, requirement)
}
