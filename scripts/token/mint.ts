/**
 * Mints a development bearer token for a service in AUTH_MODE=jwt with JWT_SECRET (docs/getting-started-jwt.md):
 *
 *   JWT_SECRET=… npm run --silent token -- <userId> [--expires 30m]
 *
 * prints an HS256 JWT whose JWT_USER_CLAIM (default `sub`) is the userId, with `iat` now and `exp`
 * one hour ahead unless `--expires` says otherwise (at most 24 h: the service refuses older tokens);
 * `iss` and `aud` are JWT_ISSUER / JWT_AUDIENCE when set, as the service then checks them. Whether the
 * user is an admin is not in the token: it is the stored user's `admin` role. In production an identity
 * provider issues tokens (JWT_JWKS_URL); this script is for development and tests.
 */
import { fileURLToPath } from 'node:url'
import { SignJWT } from 'jose'

export const DEFAULT_EXPIRY_SECONDS = 3_600
export const MAX_EXPIRY_SECONDS = 24 * 3_600

export interface TokenRequest {
  secret: string
  userId: string
  /** The claim that names the user (JWT_USER_CLAIM). */
  userClaim: string
  expiresInSeconds: number
  issuer?: string | undefined
  audience?: string | undefined
  now: Date
}

export class TokenUsageError extends Error {}

const USAGE = 'usage: JWT_SECRET=<secret> npm run --silent token -- <userId> [--expires <n>s|<n>m|<n>h]'
const UNIT_SECONDS: Record<string, number> = { s: 1, m: 60, h: 3_600 }

/** `90s`, `30m`, `1h` → seconds, within (0, 24 h]. */
export function expirySeconds(text: string): number {
  const match = /^(\d+)([smh])$/.exec(text)
  const seconds = match ? Number(match[1]) * UNIT_SECONDS[match[2]!]! : NaN
  if (!(seconds > 0 && seconds <= MAX_EXPIRY_SECONDS))
    throw new TokenUsageError(`--expires must be like 90s, 30m or 1h, at most 24h; got "${text}"`)
  return seconds
}

/** What the command line and the environment ask for; throws TokenUsageError saying what is wrong. */
export function tokenRequestOf(args: readonly string[], env: NodeJS.ProcessEnv, now: Date): TokenRequest {
  const secret = env.JWT_SECRET
  if (!secret?.trim()) throw new TokenUsageError(`JWT_SECRET is not set: set it to the service's JWT_SECRET\n${USAGE}`)
  const positional: string[] = []
  let expiresInSeconds = DEFAULT_EXPIRY_SECONDS
  for (let index = 0; index < args.length; index++) {
    const arg = args[index]!
    if (arg === '--expires') expiresInSeconds = expirySeconds(args[++index] ?? '')
    else if (arg.startsWith('--')) throw new TokenUsageError(`unknown option ${arg}\n${USAGE}`)
    else positional.push(arg)
  }
  if (positional.length !== 1 || positional[0] === '') throw new TokenUsageError(`name exactly one userId\n${USAGE}`)
  return {
    secret,
    userId: positional[0]!,
    userClaim: env.JWT_USER_CLAIM || 'sub',
    expiresInSeconds,
    issuer: env.JWT_ISSUER || undefined,
    audience: env.JWT_AUDIENCE || undefined,
    now,
  }
}

export async function mintToken(request: TokenRequest): Promise<string> {
  const issuedAt = Math.floor(request.now.getTime() / 1000)
  let token = new SignJWT({ [request.userClaim]: request.userId })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuedAt(issuedAt)
    .setExpirationTime(issuedAt + request.expiresInSeconds)
  if (request.issuer) token = token.setIssuer(request.issuer)
  if (request.audience) token = token.setAudience(request.audience)
  return token.sign(new TextEncoder().encode(request.secret))
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(await mintToken(tokenRequestOf(process.argv.slice(2), process.env, new Date())))
  } catch (error) {
    if (!(error instanceof TokenUsageError)) throw error
    console.error(error.message)
    process.exitCode = 1
  }
}
