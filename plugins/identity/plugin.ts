/**
 * Identity (DESIGN.md §5): the `user` header names a userId in the users store. Routes whose
 * OpenAPI operation requires the header answer 401 without it or for an unknown user; routes where it
 * is optional resolve it when given. The acting user's tenant is its organizationId + appId.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../store/port.js'

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

export interface IdentityPluginOptions {
  /** Catalogue code answered (401) for a missing or unknown user. */
  unknownUserCode: string
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The acting user, once resolved from the `user` header; null when the route needs none. */
    actor: Actor | null
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

async function identityPlugin(fastify: FastifyInstance, options: IdentityPluginOptions): Promise<void> {
  fastify.decorateRequest('actor', null)
  fastify.addHook('preValidation', async (request: FastifyRequest) => {
    const requirement = request.routeOptions.config.identity ?? 'none'
    if (requirement === 'none') return
    const header = request.headers.user
    const userId = Array.isArray(header) ? header[0] : header
    if (!userId) {
      if (requirement === 'required') throw fastify.fail(options.unknownUserCode, { args: ['the user header is missing'], parameters: { field: 'headers.user' } })
      return
    }
    const actor = await findActor(fastify.store, userId)
    if (!actor) throw fastify.fail(options.unknownUserCode, { args: [`unknown user ${userId}`], parameters: { field: 'headers.user' } })
    request.actor = actor
  })
}

export default fp(identityPlugin, { name: 'identity', fastify: '5.x', dependencies: ['store', 'errors'] })
