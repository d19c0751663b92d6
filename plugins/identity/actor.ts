/**
 * The acting user of a request (docs/reference/identity.md#identity-modes): a user of the users
 * store, found by the `user` header (header mode) or by the bearer token (jwt mode).
 */
import type { FastifyRequest } from 'fastify'
import { deepFreeze } from '../../lib/deep-freeze.js'
import { readThrough } from '../cache/read-through.js'
import { USERS_CACHE, WRITTEN_ELSEWHERE_MAX_AGE_MS } from '../cache/written-elsewhere.js'
import type { CacheRegistry } from '../cache/registry.js'
import type { Store } from '../../store/port.js'

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

declare module 'fastify' {
  interface FastifyRequest {
    /** The acting user, once resolved from the token or the `user` header; null when the route needs none. */
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

/**
 * The actor `userId` names, from the `users` cache: every request resolves one, and most requests
 * come from the same few users. A miss is not kept (a user created next must be found at once).
 */
export function cachedActor(store: Store, caches: CacheRegistry, userId: string): Promise<Actor | null> {
  return readThrough(caches, USERS_CACHE, `actor:${userId}`, async () => deepFreeze(await findActor(store, userId)) as Actor | null, {
    maxAgeMs: WRITTEN_ELSEWHERE_MAX_AGE_MS,
    keep: (actor) => actor !== null,
  })
}

/** The userId the `user` header names (its first value when sent twice). */
export function userHeader(request: FastifyRequest): string | undefined {
  const value = request.headers.user
  return Array.isArray(value) ? value[0] : value
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
