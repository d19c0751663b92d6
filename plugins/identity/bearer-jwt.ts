/**
 * Verifies the bearer JWTs of AUTH_MODE=jwt with jose (docs/reference/identity.md#identity-modes): the signature against the
 * configured key (an OIDC provider's key set, fetched, cached and refreshed by jose's remote JWK set,
 * or one HS256 secret), `exp` and `iat` required, `iat` neither in the future nor older than
 * JWT_MAX_TOKEN_AGE and a lifetime (`exp - iat`) no longer than it, both give or take JWT_CLOCK_SKEW_S
 * (jose's `maxTokenAge` and `clockTolerance`), `iss` / `aud` when configured, and only the algorithms the
 * key allows — jose never accepts `none` in jwtVerify, and the lists below keep a symmetric token
 * away from a key set of public keys and the other way round.
 */
import { createRemoteJWKSet, errors, type JWTPayload, type JWTVerifyOptions, jwtVerify } from 'jose'
import type { JwtConfig } from '../../lib/config/config.js'

/** The asymmetric algorithms a provider's key set may sign with; the key's own `alg`, when it has one, narrows it further. */
const KEY_SET_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519']
const SECRET_ALGORITHMS = ['HS256']

export class TokenRejected extends Error {
  override readonly name = 'TokenRejected'
}

export interface TokenVerifier {
  /** The acting user's id named by the token (claim JWT_USER_CLAIM); throws TokenRejected saying why not. */
  userIdOf(token: string): Promise<string>
}

/** Why a token was refused, in words safe to answer (no key material, no claim values). */
function problemOf(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'the token has expired'
  if (error instanceof errors.JWTClaimValidationFailed) return `its ${error.claim} claim is missing or not accepted`
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its algorithm is not accepted'
  if (error instanceof errors.JWSSignatureVerificationFailed) return 'its signature does not verify'
  if (error instanceof errors.JWKSNoMatchingKey) return 'no key of the key set matches it'
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JOSENotSupported) return 'its key cannot be used'
  if (error instanceof errors.JWSInvalid || error instanceof errors.JWTInvalid) return 'it is not a valid JWT'
  return 'it cannot be verified'
}

export function tokenVerifier(config: JwtConfig): TokenVerifier {
  const options: JWTVerifyOptions = {
    requiredClaims: ['exp', 'iat'],
    maxTokenAge: config.maxTokenAgeSeconds,
    clockTolerance: config.clockSkewSeconds,
    algorithms: 'jwksUrl' in config.keys ? KEY_SET_ALGORITHMS : SECRET_ALGORITHMS,
    ...(config.issuer === undefined ? {} : { issuer: config.issuer }),
    ...(config.audience === undefined ? {} : { audience: config.audience }),
  }
  // The key set is fetched on first use, kept, and fetched again for an unknown `kid` (jose's cooldown
  // and cache); a secret is one symmetric key.
  const key = 'jwksUrl' in config.keys ? createRemoteJWKSet(new URL(config.keys.jwksUrl)) : new TextEncoder().encode(config.keys.secret)
  const verify = async (token: string): Promise<JWTPayload> =>
    (typeof key === 'function' ? await jwtVerify(token, key, options) : await jwtVerify(token, key, options)).payload
  return {
    async userIdOf(token) {
      let claims: JWTPayload
      try {
        claims = await verify(token)
      } catch (error) {
        throw new TokenRejected(problemOf(error), { cause: error })
      }
      // jose bounds how old a token is (maxTokenAge from `iat`), not how long it was made to live: a
      // token minted with a far-future `exp` is refused outright rather than honoured for a day.
      if (
        typeof claims.exp === 'number' &&
        typeof claims.iat === 'number' &&
        claims.exp - claims.iat > config.maxTokenAgeSeconds + config.clockSkewSeconds
      )
        throw new TokenRejected('its lifetime (exp - iat) is longer than JWT_MAX_TOKEN_AGE')
      const userId = claims[config.userClaim]
      if (typeof userId !== 'string' || userId === '') throw new TokenRejected(`its ${config.userClaim} claim does not name a user`)
      return userId
    },
  }
}
