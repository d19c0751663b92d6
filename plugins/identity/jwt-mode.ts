/**
 * `AUTH_MODE=jwt` (docs/reference/identity.md#identity-modes): every non-public route needs
 * `authorization: Bearer <JWT>` (bearer-jwt.ts) and the token's user is the actor. A `user` header,
 * when sent, must name that same user, except that a system user may act as any user of its own
 * tenant by naming it (docs/reference/identity.md#acting-for-others).
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { type Actor, cachedActor, userHeader } from './actor.js'
import { bearerToken } from './admin-token.js'
import { TokenRejected, type TokenVerifier } from './bearer-jwt.js'
import type { IdentityCodes } from './codes.js'

/** The token's user, or the user of its tenant a system user's token names in `user`; 401 or 403 otherwise. */
export type TokenIdentity = (request: FastifyRequest) => Promise<Actor>

function sameTenant(a: Actor, b: Actor): boolean {
  return a.organizationId === b.organizationId && a.appId === b.appId
}

export function tokenIdentity(fastify: FastifyInstance, codes: IdentityCodes, verifier: TokenVerifier): TokenIdentity {
  return async (request) => {
    const token = bearerToken(request)
    if (token === undefined)
      throw fastify.fail(codes.unauthenticated, {
        args: ['the authorization header carries no bearer token'],
        parameters: { field: 'headers.authorization' },
      })
    let tokenUserId: string
    try {
      tokenUserId = await verifier.userIdOf(token)
    } catch (error) {
      if (error instanceof TokenRejected)
        throw fastify.fail(codes.unauthenticated, { args: [error.message], parameters: { field: 'headers.authorization' }, cause: error })
      throw error
    }
    const tokenUser = await cachedActor(fastify.store, fastify.caches, tokenUserId)
    if (!tokenUser)
      throw fastify.fail(codes.unknownUser, { args: ['the token names no known user'], parameters: { field: 'headers.authorization' } })
    const named = userHeader(request)
    if (named === undefined || named === tokenUser.userId) return tokenUser
    if (!tokenUser.isSystemUser)
      throw fastify.fail(codes.forbidden, {
        args: ['the user header names another user than the token'],
        parameters: { field: 'headers.user' },
      })
    // Unknown and other-tenant users answer alike: a system user learns nothing of other tenants.
    const actor = await cachedActor(fastify.store, fastify.caches, named)
    if (!actor || !sameTenant(actor, tokenUser))
      throw fastify.fail(codes.forbidden, {
        args: [`the user header names no user of the token's tenant`],
        parameters: { field: 'headers.user' },
      })
    return actor
  }
}
