/**
 * Identity (DESIGN.md §5, README "Security model"): who is calling, established before the body is
 * read, by one onRequest hook added only to the routes that need it.
 *
 * - `AUTH_MODE=header`: the `user` header names a userId of the users store, trusted as sent.
 * - `AUTH_MODE=jwt`: every non-public route needs `authorization: Bearer <JWT>` (bearer-jwt.ts); the
 *   token's user is the actor. A `user` header, when sent, must name that same user, except that a
 *   system user may act as any user of its own tenant by naming it.
 *
 * A route's `identity` (from its operation's `user` header parameter: `User` → required,
 * `OptionalUser` → optional) says whether an actor must be established (401 otherwise) or is
 * resolved when given. Admin routes (`adminToken`) take `Bearer <ADMIN_TOKEN>`, compared in constant
 * time before any JWT check; in jwt mode a token of a user with role `admin` also does, limited to
 * that user's tenant (`request.tenantAdmin`, which the admin routes apply).
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorCode } from '../../openapi/generated/errors.js'
import type { AuthConfig } from '../../lib/config/config.js'
import type { IdentityRequirement } from '../../lib/server/route.js'
import type { Store } from '../../store/port.js'
import { bearerToken, tokenMatcher } from './admin-token.js'
import { TokenRejected, type TokenVerifier, tokenVerifier } from './bearer-jwt.js'

export interface Actor {
  userId: string
  fullName: string
  roles: string[]
  swimlanes: string[]
  unit?: { id: string; name: string }
  organizationId: string
  appId: string
  isSystemUser: boolean
}

/** The catalogue codes the identity checks answer with, each service's own (`satisfies IdentityCodes<GatewayErrorCode>`). */
export interface IdentityCodes<Code extends ErrorCode = ErrorCode> {
  /**
   * 401: the `user` header is missing where an actor is required, or names no user (header mode); the token's user is unknown (jwt mode).
   */
  unknownUser: Code
  /** 401: no bearer token, or one that does not verify (jwt mode). */
  unauthenticated: Code
  /** 403: the token's user may not act as the one the `user` header names, or is no admin on an admin route. */
  forbidden: Code
  /** 401: an admin route without the right ADMIN_TOKEN in header mode (the gateway's only). */
  adminToken?: Code
}

export interface IdentityPluginOptions {
  auth: AuthConfig
  /** ADMIN_TOKEN; unset in header mode leaves the admin routes open (development). */
  adminToken?: string | undefined
  codes: IdentityCodes
  /** The key set or secret checked in jwt mode; built from `auth` when not given. */
  verifier?: TokenVerifier
}

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
    /** The acting user, once resolved from the token or the `user` header; null when the route needs none. */
    actor: Actor | null
    /**
     * Set when an admin route was let in by a tenant admin's token rather than ADMIN_TOKEN: the one
     * tenant it may act on. Null for ADMIN_TOKEN (every tenant) and for open admin routes.
     */
    tenantAdmin: TenantScope | null
  }
}

export const USERS_COLLECTION = 'users'

interface StoredUser {
  userId: string
  fullName?: string
  roles?: string[]
  swimlanes?: string[]
  unit?: { id: string; name: string }
  organizationId?: string
  appId?: string
  isSystemUser?: boolean
  [key: string]: unknown
}

export async function findActor(store: Store, userId: string): Promise<Actor | null> {
  const user = await store.collection<StoredUser>(USERS_COLLECTION).findOne({ userId }, { projection: { _id: 0 } })
  if (!user) return null
  return {
    userId: user.userId,
    fullName: user.fullName ?? '',
    roles: user.roles ?? [],
    swimlanes: user.swimlanes ?? [],
    ...(user.unit ? { unit: user.unit } : {}),
    organizationId: user.organizationId ?? '',
    appId: user.appId ?? '',
    isSystemUser: user.isSystemUser ?? false,
  }
}

function headerValue(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name]
  return Array.isArray(value) ? value[0] : value
}

function sameTenant(a: Actor, b: Actor): boolean {
  return a.organizationId === b.organizationId && a.appId === b.appId
}

/**
 * The acting user of a route whose contract requires one (`x-identity: User`): the identity hook
 * established it before the handler ran, so its absence is a defect in the route's wiring (500).
 */
export function requireActor(request: FastifyRequest): Actor {
  if (!request.actor)
    throw new Error(`${request.method} ${request.routeOptions.url ?? request.url}: no actor, although the route requires a user`)
  return request.actor
}

async function identityPlugin(fastify: FastifyInstance, options: IdentityPluginOptions): Promise<void> {
  const { auth, codes } = options
  const isAdminToken = options.adminToken === undefined ? undefined : tokenMatcher(options.adminToken)
  const verifier = auth.mode === 'jwt' ? (options.verifier ?? tokenVerifier(auth.jwt)) : undefined
  fastify.decorateRequest('actor', null)
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
  if (auth.mode === 'header') {
    fastify.log.warn(
      'AUTH_MODE=header: the user header is trusted as sent; run behind an ' +
        'authenticating proxy or set AUTH_MODE=jwt (README "Security model")',
    )
  }

  /** Header mode: the user the `user` header names, as today. */
  const fromUserHeader = async (request: FastifyRequest, requirement: IdentityRequirement): Promise<void> => {
    if (requirement === 'none') return
    const userId = headerValue(request, 'user')
    if (!userId) {
      if (requirement === 'required')
        throw fastify.fail(codes.unknownUser, { args: ['the user header is missing'], parameters: { field: 'headers.user' } })
      return
    }
    const actor = await findActor(fastify.store, userId)
    if (!actor) throw fastify.fail(codes.unknownUser, { args: [`unknown user ${userId}`], parameters: { field: 'headers.user' } })
    request.actor = actor
  }

  /** Jwt mode: the token's user, or the user of its tenant a system user's token names in `user`. */
  const fromToken = async (request: FastifyRequest, tokenVerifier: TokenVerifier): Promise<Actor> => {
    const token = bearerToken(request)
    if (token === undefined)
      throw fastify.fail(codes.unauthenticated, {
        args: ['the authorization header carries no bearer token'],
        parameters: { field: 'headers.authorization' },
      })
    let tokenUserId: string
    try {
      tokenUserId = await tokenVerifier.userIdOf(token)
    } catch (error) {
      if (error instanceof TokenRejected)
        throw fastify.fail(codes.unauthenticated, { args: [error.message], parameters: { field: 'headers.authorization' }, cause: error })
      throw error
    }
    const tokenUser = await findActor(fastify.store, tokenUserId)
    if (!tokenUser)
      throw fastify.fail(codes.unknownUser, { args: ['the token names no known user'], parameters: { field: 'headers.authorization' } })
    const named = headerValue(request, 'user')
    if (named === undefined || named === tokenUser.userId) return tokenUser
    if (!tokenUser.isSystemUser)
      throw fastify.fail(codes.forbidden, {
        args: ['the user header names another user than the token'],
        parameters: { field: 'headers.user' },
      })
    // Unknown and other-tenant users answer alike: a system user learns nothing of other tenants.
    const actor = await findActor(fastify.store, named)
    if (!actor || !sameTenant(actor, tokenUser))
      throw fastify.fail(codes.forbidden, {
        args: [`the user header names no user of the token's tenant`],
        parameters: { field: 'headers.user' },
      })
    return actor
  }

  const adminRoute = async (request: FastifyRequest, requirement: IdentityRequirement): Promise<void> => {
    // ADMIN_TOKEN first, in constant time: the operator's token never goes to a JWT parser.
    if (fastify.presentsAdminToken(request)) return
    if (verifier === undefined) {
      if (isAdminToken !== undefined)
        throw fastify.fail(codes.adminToken ?? codes.unauthenticated, { parameters: { field: 'headers.authorization' } })
      return fromUserHeader(request, requirement)
    }
    const actor = await fromToken(request, verifier)
    if (!actor.roles.includes('admin'))
      throw fastify.fail(codes.forbidden, {
        args: ['admin endpoints need ADMIN_TOKEN or a token of a user with role admin'],
        parameters: { field: 'headers.authorization' },
      })
    request.actor = actor
    request.tenantAdmin = { organizationId: actor.organizationId, appId: actor.appId }
  }

  const hookFor = (route: RouteOptions): ((request: FastifyRequest) => Promise<void>) | undefined => {
    // Routes the generated tables do not describe (docs, the gateway's proxy: the engine checks
    // those itself) and the public operations (`security: []`) are not this plugin's.
    const requirement = route.config?.identity
    if (requirement === undefined || route.config?.public) return undefined
    if (route.config?.adminToken)
      return isAdminToken === undefined && verifier === undefined && requirement === 'none'
        ? undefined
        : (request) => adminRoute(request, requirement)
    if (verifier !== undefined) {
      return async (request) => {
        request.actor = await fromToken(request, verifier)
      }
    }
    return requirement === 'none' ? undefined : (request) => fromUserHeader(request, requirement)
  }

  // A hook of the routes that need one, added as each is registered: the others (health, docs,
  // the proxy's in header mode) run none and make no promise for a check that does not concern them.
  fastify.addHook('onRoute', (route) => {
    const hook = hookFor(route)
    if (hook === undefined) return
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...own, hook]
  })
}

export default fp(identityPlugin, { name: 'identity', fastify: '5.x', dependencies: ['store', 'errors'] })
