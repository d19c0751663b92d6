/**
 * `AUTH_MODE=header` (docs/reference/identity.md#identity-modes): the `user` header names a userId
 * of the users store, trusted as sent — development, or behind a proxy that authenticates and sets
 * it (README.md "Security model").
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { IdentityRequirement } from '../../lib/server/route.js'
import { cachedActor, userHeader } from './actor.js'
import type { IdentityCodes } from './codes.js'

/** Sets `request.actor` to the user the `user` header names; a required one that is missing or unknown is 401. */
export type HeaderIdentity = (request: FastifyRequest, requirement: IdentityRequirement) => Promise<void>

export function headerIdentity(fastify: FastifyInstance, codes: IdentityCodes): HeaderIdentity {
  return async (request, requirement) => {
    if (requirement === 'none') return
    const userId = userHeader(request)
    if (!userId) {
      if (requirement === 'required')
        throw fastify.fail(codes.unknownUser, { args: ['the user header is missing'], parameters: { field: 'headers.user' } })
      return
    }
    const actor = await cachedActor(fastify.store, fastify.caches, userId)
    if (!actor) throw fastify.fail(codes.unknownUser, { args: [`unknown user ${userId}`], parameters: { field: 'headers.user' } })
    request.actor = actor
  }
}

/** Said once at start: header mode trusts whoever reaches the port. */
export function warnHeaderMode(fastify: FastifyInstance): void {
  fastify.log.warn(
    'AUTH_MODE=header: the user header is trusted as sent; run behind an ' +
      'authenticating proxy or set AUTH_MODE=jwt (README "Security model")',
  )
}
