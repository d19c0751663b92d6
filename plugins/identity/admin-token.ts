/**
 * The gateway's admin endpoints (DESIGN.md §5: users, models, cache, notify — the operations whose
 * OpenAPI `security` lists `adminToken`) are open while ADMIN_TOKEN is unset (development); with it
 * set they need `authorization: Bearer <ADMIN_TOKEN>`, checked before the body is even read.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'

export interface AdminTokenOptions {
  /** ADMIN_TOKEN; undefined leaves the admin endpoints open. */
  token: string | undefined
  /** Catalogue code answered (401) for a missing or wrong token. */
  code: string
}

/** Digests compare in constant time whatever the lengths of the two tokens. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Does the request present the configured ADMIN_TOKEN (false while none is configured)? */
    presentsAdminToken(request: FastifyRequest): boolean
  }
}

export function bearerToken(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
  return match?.[1]
}

async function adminTokenPlugin(fastify: FastifyInstance, options: AdminTokenOptions): Promise<void> {
  const expected = options.token === undefined ? undefined : digest(options.token)
  const presents = (request: FastifyRequest): boolean => {
    if (expected === undefined) return false
    const given = bearerToken(request)
    return given !== undefined && timingSafeEqual(digest(given), expected)
  }
  fastify.decorate('presentsAdminToken', presents)
  if (expected === undefined) return
  const check = async (request: FastifyRequest): Promise<void> => {
    if (!presents(request)) throw fastify.fail(options.code, { parameters: { field: 'headers.authorization' } })
  }
  // A hook of the admin routes only, added as each is registered: every other request (the proxy's
  // above all) runs no hook, and makes no promise, for a check that does not concern it.
  fastify.addHook('onRoute', (route) => {
    if (!route.config?.adminToken) return
    const own = route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]
    route.onRequest = [...own, check]
  })
}

export default fp(adminTokenPlugin, { name: 'admin-token', fastify: '5.x', dependencies: ['errors'] })
