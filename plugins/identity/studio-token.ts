/**
 * The log stream's `studiotoken` (docs/reference/identity.md#public-routes): a compact HS256 JWT signed with
 * STUDIO_TOKEN_SECRET whose `sub` is the caller's `lplogclientid`. Verified with node:crypto: the
 * header must say HS256 (no `none`, no other algorithm), the signature is compared in constant
 * time, `exp` is required and at most 24 hours ahead (a stream token cannot be valid forever), and
 * `nbf` is honoured when present.
 */
import { createHmac, timingSafeEqual } from 'node:crypto'

/** The longest a studio token may stay valid, counted from now. */
export const STUDIO_TOKEN_MAX_LIFETIME_SECONDS = 24 * 60 * 60

export type TokenVerdict = { valid: true; claims: Record<string, unknown> } | { valid: false; problem: string }

function base64urlJson(value: unknown): string {
  return Buffer.from(JSON.stringify(value)).toString('base64url')
}

function signature(signingInput: string, secret: string): Buffer {
  return createHmac('sha256', secret).update(signingInput).digest()
}

function decodeJsonObject(segment: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown
    return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined
  } catch {
    return undefined
  }
}

/** Signs claims as an HS256 JWT (tests, and operators minting tokens). */
export function signStudioToken(claims: Record<string, unknown>, secret: string): string {
  const signingInput = `${base64urlJson({ alg: 'HS256', typ: 'JWT' })}.${base64urlJson(claims)}`
  return `${signingInput}.${signature(signingInput, secret).toString('base64url')}`
}

export function verifyStudioToken(token: string, secret: string, nowMs: number = Date.now()): TokenVerdict {
  const segments = token.split('.')
  if (segments.length !== 3 || segments.some((segment) => !/^[A-Za-z0-9_-]+$/.test(segment)))
    return { valid: false, problem: 'not a compact JWT' }
  const [encodedHeader, encodedClaims, encodedSignature] = segments as [string, string, string]
  const header = decodeJsonObject(encodedHeader)
  if (!header) return { valid: false, problem: 'unreadable header' }
  if (header.alg !== 'HS256') return { valid: false, problem: `algorithm ${JSON.stringify(header.alg)} is not HS256` }
  const expected = signature(`${encodedHeader}.${encodedClaims}`, secret)
  const given = Buffer.from(encodedSignature, 'base64url')
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { valid: false, problem: 'bad signature' }
  const claims = decodeJsonObject(encodedClaims)
  if (!claims) return { valid: false, problem: 'unreadable claims' }
  const nowSeconds = nowMs / 1000
  if (typeof claims.exp !== 'number') return { valid: false, problem: 'it has no exp' }
  if (nowSeconds >= claims.exp) return { valid: false, problem: 'expired' }
  if (claims.exp - nowSeconds > STUDIO_TOKEN_MAX_LIFETIME_SECONDS) return { valid: false, problem: 'its exp is more than 24 hours ahead' }
  if (claims.nbf !== undefined && !(typeof claims.nbf === 'number' && nowSeconds >= claims.nbf))
    return { valid: false, problem: 'not valid yet' }
  return { valid: true, claims }
}
