/**
 * The bearer token of a request, and the constant-time check of the operator's ADMIN_TOKEN that the
 * identity plugin runs on the gateway's admin endpoints (docs/reference/identity.md#admin-endpoints:
 * users, models, cache, notify — the operations whose OpenAPI `security` lists `adminToken`) before
 * any JWT check.
 */
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyRequest } from 'fastify'

/** Digests compare in constant time whatever the lengths of the two tokens. */
function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}

export function bearerToken(request: Pick<FastifyRequest, 'headers'>): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')
  return match?.[1]
}

/** Whether a given token is `expected`, compared in constant time. */
export function tokenMatcher(expected: string): (given: string) => boolean {
  const expectedDigest = digest(expected)
  return (given) => timingSafeEqual(digest(given), expectedDigest)
}
