/**
 * Identity (docs/reference/identity.md#identity-modes, README.md "Security model"): who is calling,
 * established before the body is read, by one onRequest hook added only to the routes that need it.
 * This file chooses the check of each route; the modes are header-mode.ts (`AUTH_MODE=header`),
 * jwt-mode.ts (`AUTH_MODE=jwt`) and admin-routes.ts (the routes of `adminToken`).
 *
 * A route's `identity` (from its operation's `user` header parameter: `User` → required,
 * `OptionalUser` → optional) says whether an actor must be established (401 otherwise) or is
 * resolved when given.
 */
import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { AuthConfig } from '../../lib/config/config.js'
import { adminRoutes } from './admin-routes.js'
import { type TokenVerifier, tokenVerifier } from './bearer-jwt.js'
import type { IdentityCodes } from './codes.js'
import { headerIdentity, warnHeaderMode } from './header-mode.js'
import { tokenIdentity } from './jwt-mode.js'

export interface IdentityPluginOptions {
  auth: AuthConfig
  /** ADMIN_TOKEN; unset in header mode leaves the admin routes open (development). */
  adminToken?: string | undefined
  codes: IdentityCodes
  /** The key set or secret checked in jwt mode; built from `auth` when not given. */
  verifier?: TokenVerifier
}

type IdentityHook = (request: FastifyRequest) => Promise<void>

async function identityPlugin(fastify: FastifyInstance, options: IdentityPluginOptions): Promise<void> {
  const { auth, codes } = options
  fastify.decorateRequest('actor', null)
  const fromUserHeader = headerIdentity(fastify, codes)
  const fromToken = auth.mode === 'jwt' ? tokenIdentity(fastify, codes, options.verifier ?? tokenVerifier(auth.jwt)) : undefined
  const adminRoute = adminRoutes(fastify, { codes, adminToken: options.adminToken, fromToken, fromUserHeader })
  if (auth.mode === 'header') warnHeaderMode(fastify)

  const hookFor = (route: RouteOptions): IdentityHook | undefined => {
    // Routes the generated tables do not describe (docs, the gateway's proxy: the engine checks
    // those itself) and the public operations (`security: []`) are not this plugin's.
    const requirement = route.config?.identity
    if (requirement === undefined || route.config?.public) return undefined
    if (route.config?.adminToken) return adminRoute(requirement)
    if (fromToken !== undefined) {
      return async (request) => {
        request.actor = await fromToken(request)
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

export default fp(identityPlugin, { name: 'identity', fastify: '5.x', dependencies: ['store', 'caches', 'errors'] })
