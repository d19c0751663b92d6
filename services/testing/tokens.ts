/**
 * Test support for AUTH_MODE=jwt: a config that turns it on with a test secret, and bearer tokens
 * minted for a user with jose, as an identity provider would.
 *
 *   const gateway = await startService(t, 'gateway', { config: jwtAuthConfig() })
 *   fetch(url, { headers: { authorization: `Bearer ${await tokenFor(user.userId)}` } })
 */
import { type CryptoKey, type JWTPayload, type KeyObject, SignJWT } from 'jose'
import type { AuthConfig, Config, JwtConfig } from '../../lib/config/config.js'

/** The HS256 secret the tests sign with (JWT_SECRET: at least 32 characters). */
export const TEST_JWT_SECRET = 'test-jwt-secret-0123456789abcdef0123456789'

/** `config` overrides for startService: jwt mode over TEST_JWT_SECRET (or what `jwt` sets instead). */
export function jwtAuthConfig(jwt: Partial<JwtConfig> = {}): Pick<Config, 'auth'> {
  const auth: AuthConfig = {
    mode: 'jwt',
    jwt: {
      keys: { secret: TEST_JWT_SECRET },
      issuer: undefined,
      audience: undefined,
      userClaim: 'sub',
      maxTokenAgeSeconds: 24 * 3_600,
      clockSkewSeconds: 60,
      ...jwt,
    },
  }
  return { auth }
}

export interface TokenOptions {
  /** HS256 secret; TEST_JWT_SECRET by default. Ignored when `key` is given. */
  secret?: string
  /** An asymmetric private key (JWKS tests), signed with `alg`. */
  key?: CryptoKey | KeyObject
  /** The algorithm of the protected header: HS256 with a secret by default. */
  alg?: string
  /** The `kid` of the protected header (a key of a key set). */
  kid?: string
  /** Seconds from now until `exp` (default 600); null leaves `exp` out. */
  expiresInSeconds?: number | null
  issuer?: string
  audience?: string
  /** The claim that names the user (default `sub`). */
  userClaim?: string
  /** Seconds from now of `iat` (default 0: now); null leaves `iat` out. */
  issuedAtOffsetSeconds?: number | null
  /** Further claims. */
  claims?: JWTPayload
}

/** A signed bearer token naming `userId`. */
export async function tokenFor(userId: string, options: TokenOptions = {}): Promise<string> {
  const userClaim = options.userClaim ?? 'sub'
  const jwt = new SignJWT({ ...options.claims, [userClaim]: userId }).setProtectedHeader({
    alg: options.alg ?? 'HS256',
    ...(options.kid ? { kid: options.kid } : {}),
  })
  const issuedAtOffset = options.issuedAtOffsetSeconds === undefined ? 0 : options.issuedAtOffsetSeconds
  if (issuedAtOffset !== null) jwt.setIssuedAt(Math.floor(Date.now() / 1000) + issuedAtOffset)
  const expiresIn = options.expiresInSeconds === undefined ? 600 : options.expiresInSeconds
  if (expiresIn !== null) jwt.setExpirationTime(Math.floor(Date.now() / 1000) + expiresIn)
  if (options.issuer !== undefined) jwt.setIssuer(options.issuer)
  if (options.audience !== undefined) jwt.setAudience(options.audience)
  return jwt.sign(options.key ?? new TextEncoder().encode(options.secret ?? TEST_JWT_SECRET))
}

/** `{ authorization: 'Bearer <token for userId>' }`. */
export async function bearerFor(userId: string, options: TokenOptions = {}): Promise<{ authorization: string }> {
  return { authorization: `Bearer ${await tokenFor(userId, options)}` }
}

/** The `identify` of workflow.ts's client in jwt mode: each call's user sends a fresh bearer token. */
export function bearerIdentity(options: TokenOptions = {}): (userId: string) => Promise<Record<string, string>> {
  return (userId) => bearerFor(userId, options)
}
