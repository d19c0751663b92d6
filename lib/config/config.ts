/**
 * The service's configuration: the environment of README.md's configuration table, read once and validated by a pure
 * function so that a bad value stops start-up with a message that names it.
 */
import { resolve } from 'node:path'

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

export interface Config {
  gatewayPort: number
  enginePort: number
  host: string
  engineUrl: string
  /**
   * A Unix domain socket the engine listens on besides its port, and the gateway reaches it through
   * (ENGINE_URL still names it), when both run on one host: cheaper per request than TCP loopback.
   */
  engineSocket: string | undefined
  /**
   * Where the all-in-one runs its gateway: `main`, on the engine's thread, which it reaches without
   * HTTP; `thread`, on a worker thread of its own, which reaches the engine over HTTP as a split
   * gateway does (docs/production.md#the-all-in-one).
   */
  allInOneGateway: AllInOneGateway
  dataDir: string
  mongodbUri: string | undefined
  /**
   * Lets `start:gateway` open an embedded store of its own without MONGODB_URI. A gateway started
   * alone must share the engines' store, and an embedded store is one process's: it would never see
   * the engine's data (see docs/production.md "The shape").
   */
  allowGatewayEmbeddedStore: boolean
  logLevel: LogLevel
  /** `NODE_ENV=development` shows stacks in error answers. */
  development: boolean
  /** How long a task lock lasts after it was taken or renewed (docs/reference/locks.md#lapse). */
  lockTtlSeconds: number
  /** Wall-clock limit of one flow-function run (docs/reference/flow-functions.md#limits). */
  flowTimeoutMs: number
  /** Multiplies the proxy's per-route timeouts (60 s, files 300 s); tests shrink them. */
  proxyTimeoutScale: number
  /** First retry delay of a failed batch job; each further try doubles it (docs/reference/jobs.md#the-batch-worker). */
  batchBackoffMs: number
  /** How often an engine looks for due batch jobs and schedule ticks. */
  batchPollMs: number
  /** How often a long poll looks for external tasks other engines created (docs/reference/external-tasks.md#long-polling). */
  externalTaskPollMs: number
  /** How long a claimed batch job stays claimed without a renewal before another engine may run it. */
  batchLeaseMs: number
  /** How long finished (`done`, `failed`) batch jobs are kept before they are removed. */
  batchRetentionHours: number
  /**
   * Ended instances whose last change is older than this many days are removed in the background
   * (docs/reference/lifecycle.md#purging-ended-instances); undefined keeps them forever.
   */
  historyRetentionDays: number | undefined
  /** How long an idempotency key of a start answers its first answer again (docs/reference/consistency.md#idempotent-starts). */
  idempotencyTtlHours: number
  /** How often an instance looks for new cache invalidation records (docs/reference/gateway.md#caches). */
  cachePollMs: number
  /** Interval of the whitespace heartbeat on the log stream (about 15 s). */
  logHeartbeatMs: number
  /** When set, the gateway's admin endpoints need `authorization: Bearer <ADMIN_TOKEN>` (docs/reference/identity.md#admin-endpoints). */
  adminToken: string | undefined
  /** The HS256 secret that signs log stream `studiotoken`s; unset, the log stream cannot be opened. */
  studioTokenSecret: string | undefined
  /** The deployment environment; the log stream answers 500 without it (docs/reference/gateway.md#log-stream). */
  deploymentEnv: string | undefined
  /** Where a service's log lines come from when it runs in another process (docs/reference/gateway.md#log-stream). */
  logSourceUrls: { fm: string | undefined; wfm: string | undefined }
  /** The largest file `/file/upload` accepts, in bytes (413 past it, docs/reference/files.md). */
  maxUploadBytes: number
  /** How big an instance may grow (docs/security.md "Size limits"): 413/400 past a limit, nothing stored. */
  instanceLimits: { noteMaxBytes: number; notesMaxPerInstance: number; instanceMaxBytes: number }
  /** How callers prove who they are (docs/reference/identity.md#identity-modes). */
  auth: AuthConfig
  /** The worker pool flow functions run in: threads at most, heap ceiling of one worker (MiB). */
  /** Engine-thread time a flow function may hold before it moves to the worker pool; 0: every run in the pool. */
  flowInlineBudgetMs: number
  flowWorkers: { threads: number; memoryMb: number }
  /** Hosts `http` nodes may reach although private (`*.` subdomains, optional `:port`), and context headers they may forward. */
  flowHttp: { allowedHosts: string[]; forwardHeaders: string[] }
  /** How many outbound calls the flow functions of one request may make together. */
  flowHttpMaxCallsPerRequest: number
  /**
   * Bounds of tenants' data filters (conditions, `$regex`es, JSON bytes) and of the work of one search
   * (documents examined times the filter's cost), for data searches and flow functions' data nodes.
   */
  dataLimits: { maxConditions: number; maxRegexes: number; maxFilterBytes: number; maxSearchTests: number }
  /**
   * Webhook deliveries (docs/webhooks.md): hosts they may reach although private (the syntax of
   * FLOW_HTTP_ALLOWED_HOSTS), how long a receiver may take to answer, and the first retry delay
   * (each further try doubles it).
   */
  webhooks: { allowedHosts: string[]; timeoutMs: number; backoffMs: number }
  /** `maxTimeMS` of every MongoDB query, so no filter holds the database longer. */
  mongodbMaxTimeMs: number
  /** The deepest nesting of arrays and objects a JSON body may have (400 past it, before it is parsed). */
  maxJsonDepth: number
  /** Observability (docs/observability.md): Prometheus metrics and OpenTelemetry traces. */
  telemetry: TelemetryConfig
}

export const OTLP_PROTOCOLS = ['http/protobuf', 'http/json'] as const
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number]

export interface TelemetryConfig {
  /** METRICS_ENABLED (default true): false records nothing and `/metrics` answers 404. */
  metricsEnabled: boolean
  /** When set, `/metrics` needs `authorization: Bearer <METRICS_TOKEN>`. */
  metricsToken: string | undefined
  /** OTEL_EXPORTER_OTLP_ENDPOINT: unset, no span is made anywhere. */
  otlpEndpoint: string | undefined
  /** OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: the full traces URL, when it is not `<endpoint>/v1/traces`. */
  otlpTracesEndpoint: string | undefined
  /** OTEL_EXPORTER_OTLP_PROTOCOL (default http/protobuf). */
  otlpProtocol: OtlpProtocol
  /** OTEL_SERVICE_NAME overrides workflow-gateway / workflow-engine. */
  serviceName: string | undefined
}

export const ALL_IN_ONE_GATEWAYS = ['main', 'thread'] as const
export type AllInOneGateway = (typeof ALL_IN_ONE_GATEWAYS)[number]

export const AUTH_MODES = ['header', 'jwt'] as const
export type AuthMode = (typeof AUTH_MODES)[number]

/** Where bearer tokens' keys come from in jwt mode: an OIDC provider's key set, or one shared HS256 secret. */
export type JwtKeySource = { jwksUrl: string } | { secret: string }

export interface JwtConfig {
  keys: JwtKeySource
  /** Checked against the token's `iss` when set. */
  issuer: string | undefined
  /** Checked against the token's `aud` when set. */
  audience: string | undefined
  /** The claim whose value is the acting user's `userId` (default `sub`). */
  userClaim: string
  /**
   * JWT_MAX_TOKEN_AGE (default 24 h): a token is refused once its `iat` is older than this, and when
   * its own lifetime (`exp - iat`) is longer, so a far-future `exp` buys nothing.
   */
  maxTokenAgeSeconds: number
  /** JWT_CLOCK_SKEW_S (default 60): how far `iat`, `nbf` and `exp` may be off between the issuer's clock and ours. */
  clockSkewSeconds: number
}

/**
 * `header`: the `user` header is trusted as sent (development, or behind an authenticating proxy).
 * `jwt`: every non-public route needs `authorization: Bearer <JWT>` and the token names the user.
 */
export type AuthConfig = { mode: 'header' } | { mode: 'jwt'; jwt: JwtConfig }

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`)
    this.name = 'ConfigError'
  }
}

type Env = Record<string, string | undefined>

function port(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) > 65535) throw new ConfigError(name, `must be a port number from 0 to 65535, got "${raw}"`)
  return Number(raw)
}

function url(env: Env, name: string, fallback: string, protocols: readonly string[]): string {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(name, `must be a URL, got "${raw}"`)
  }
  if (!protocols.includes(parsed.protocol)) throw new ConfigError(name, `must use ${protocols.join(' or ')}, got "${parsed.protocol}"`)
  return raw.replace(/\/+$/, '')
}

function positiveInteger(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || Number(raw) < 1 || !Number.isSafeInteger(Number(raw)))
    throw new ConfigError(name, `must be a positive integer, got "${raw}"`)
  return Number(raw)
}

function wholeNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)))
    throw new ConfigError(name, `must be a whole number (0 or more), got "${raw}"`)
  return Number(raw)
}

function positiveNumber(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!/^(\d+(\.\d*)?|\.\d+)$/.test(raw) || !(Number(raw) > 0)) throw new ConfigError(name, `must be a positive number, got "${raw}"`)
  return Number(raw)
}

/** Linux keeps a Unix socket's path in 108 bytes, the last one a NUL. */
const MAX_SOCKET_PATH_BYTES = 107

function optionalSocketPath(env: Env, name: string, cwd: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  const path = resolve(cwd, raw)
  if (Buffer.byteLength(path) > MAX_SOCKET_PATH_BYTES)
    throw new ConfigError(name, `must be a socket path of at most ${MAX_SOCKET_PATH_BYTES} bytes once resolved, got "${path}"`)
  return path
}

function optionalUrl(env: Env, name: string): string | undefined {
  return env[name] ? url(env, name, '', ['http:', 'https:']) : undefined
}

/**
 * A secret is unset only when absent: a set but empty or whitespace-only value is a mistake (a
 * template left unfilled) that would otherwise leave endpoints open or guarded by spaces.
 */
function optionalSecret(env: Env, name: string, minLength: number): string | undefined {
  const raw = env[name]
  if (raw === undefined) return undefined
  if (raw.trim() === '') throw new ConfigError(name, 'must not be blank or whitespace only')
  if (raw.length < minLength) throw new ConfigError(name, `must be at least ${minLength} characters long`)
  return raw
}

/** A bearer token travels as one whitespace-free word: one with whitespace in it could never match. */
function optionalBearerSecret(env: Env, name: string, minLength: number): string | undefined {
  const secret = optionalSecret(env, name, minLength)
  if (secret !== undefined && /\s/.test(secret)) throw new ConfigError(name, 'must not contain whitespace (it is sent as a bearer token)')
  return secret
}

function optionalText(env: Env, name: string): string | undefined {
  const raw = env[name]
  if (raw === undefined || raw === '') return undefined
  if (raw.trim() === '') throw new ConfigError(name, 'must not be blank or whitespace only')
  return raw
}

/** JWT keys: exactly one of JWT_JWKS_URL and JWT_SECRET, and only in jwt mode. */
function jwtKeys(env: Env): JwtKeySource {
  const jwksUrl = optionalUrl(env, 'JWT_JWKS_URL')
  const secret = optionalSecret(env, 'JWT_SECRET', 32)
  if (jwksUrl !== undefined && secret !== undefined)
    throw new ConfigError('JWT_SECRET', 'and JWT_JWKS_URL are both set: choose one key source')
  if (jwksUrl !== undefined) return { jwksUrl }
  if (secret !== undefined) return { secret }
  throw new ConfigError('AUTH_MODE', 'jwt needs JWT_JWKS_URL or JWT_SECRET')
}

const JWT_VARIABLES = [
  'JWT_JWKS_URL',
  'JWT_SECRET',
  'JWT_ISSUER',
  'JWT_AUDIENCE',
  'JWT_USER_CLAIM',
  'JWT_MAX_TOKEN_AGE',
  'JWT_CLOCK_SKEW_S',
] as const

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3_600, d: 86_400 }

/** A positive duration in seconds: `90`, `90s`, `15m`, `24h`, `7d`. */
function durationSeconds(env: Env, name: string, fallback: number): number {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  const match = /^(\d+)([smhd]?)$/.exec(raw)
  const seconds = match ? Number(match[1]) * (DURATION_UNITS[match[2] || 's'] ?? 1) : NaN
  if (!(seconds > 0) || !Number.isSafeInteger(seconds))
    throw new ConfigError(name, `must be a positive duration: seconds, or a number with s, m, h or d (e.g. 24h), got "${raw}"`)
  return seconds
}

function authConfig(env: Env): AuthConfig {
  const mode = oneOf(env, 'AUTH_MODE', AUTH_MODES, 'header')
  const allowHeaderAuth = oneOf(env, 'ALLOW_HEADER_AUTH', ['true', 'false'], 'false') === 'true'
  if (mode === 'header') {
    // Settings for jwt mode while it is off would leave the operator believing tokens are checked.
    const stray = JWT_VARIABLES.find((name) => env[name] !== undefined && env[name] !== '')
    if (stray !== undefined) throw new ConfigError(stray, 'is set but AUTH_MODE is not jwt: set AUTH_MODE=jwt or remove it')
    if (env.NODE_ENV === 'production' && !allowHeaderAuth) {
      throw new ConfigError(
        'AUTH_MODE',
        'is header (the user header is trusted as sent), which NODE_ENV=production refuses: set ' +
          'AUTH_MODE=jwt, or ALLOW_HEADER_AUTH=true behind an authenticating proxy',
      )
    }
    return { mode }
  }
  return {
    mode,
    jwt: {
      keys: jwtKeys(env),
      issuer: optionalText(env, 'JWT_ISSUER'),
      audience: optionalText(env, 'JWT_AUDIENCE'),
      userClaim: optionalText(env, 'JWT_USER_CLAIM') ?? 'sub',
      maxTokenAgeSeconds: durationSeconds(env, 'JWT_MAX_TOKEN_AGE', 24 * 3_600),
      clockSkewSeconds: wholeNumber(env, 'JWT_CLOCK_SKEW_S', 60),
    },
  }
}

const ALLOWED_HOST = /^(\*\.)?([a-z0-9-]+(\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(:\d{1,5})?$/
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9a-z-]+$/

/** A comma-separated list, trimmed and lower-cased, each item checked against `pattern`. */
function list(env: Env, name: string, pattern: RegExp, what: string): string[] {
  const items = (env[name] ?? '')
    .split(',')
    .map((item) => item.trim().toLowerCase())
    .filter((item) => item !== '')
  const bad = items.find((item) => !pattern.test(item))
  if (bad !== undefined) throw new ConfigError(name, `must be a comma-separated list of ${what}, got "${bad}"`)
  return items
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name]
  if (raw === undefined || raw === '') return fallback
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`)
  return raw as T
}

/** Parses and validates the environment. Throws ConfigError naming the first bad variable. */
export function parseConfig(env: Env, cwd: string = process.cwd()): Config {
  const enginePort = port(env, 'ENGINE_PORT', 3001)
  const host = env.HOST || '127.0.0.1'
  const mongodbUri = env.MONGODB_URI ? url(env, 'MONGODB_URI', '', ['mongodb:', 'mongodb+srv:']) : undefined
  return {
    gatewayPort: port(env, 'GATEWAY_PORT', 3000),
    enginePort,
    host,
    engineUrl: url(env, 'ENGINE_URL', `http://127.0.0.1:${enginePort}`, ['http:', 'https:']),
    engineSocket: optionalSocketPath(env, 'ENGINE_SOCKET', cwd),
    allInOneGateway: oneOf(env, 'ALL_IN_ONE_GATEWAY', ALL_IN_ONE_GATEWAYS, 'main'),
    dataDir: resolve(cwd, env.DATA_DIR || './.data'),
    mongodbUri: mongodbUri === undefined ? undefined : env.MONGODB_URI,
    allowGatewayEmbeddedStore: oneOf(env, 'ALLOW_GATEWAY_EMBEDDED_STORE', ['true', 'false'], 'false') === 'true',
    logLevel: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'),
    development: env.NODE_ENV === 'development',
    lockTtlSeconds: positiveInteger(env, 'LOCK_TTL_SECONDS', 28_800),
    flowTimeoutMs: positiveInteger(env, 'FLOW_TIMEOUT_MS', 10_000),
    proxyTimeoutScale: positiveNumber(env, 'PROXY_TIMEOUT_SCALE', 1),
    batchBackoffMs: positiveInteger(env, 'BATCH_BACKOFF_MS', 1_000),
    batchPollMs: positiveInteger(env, 'BATCH_POLL_MS', 1_000),
    externalTaskPollMs: positiveInteger(env, 'EXTERNAL_TASK_POLL_MS', 500),
    batchLeaseMs: positiveInteger(env, 'BATCH_LEASE_MS', 60_000),
    batchRetentionHours: positiveNumber(env, 'BATCH_RETENTION_HOURS', 168),
    idempotencyTtlHours: positiveNumber(env, 'IDEMPOTENCY_TTL_HOURS', 24),
    historyRetentionDays: env.HISTORY_RETENTION_DAYS ? positiveNumber(env, 'HISTORY_RETENTION_DAYS', 0) : undefined,
    cachePollMs: positiveInteger(env, 'CACHE_POLL_MS', 1_000),
    logHeartbeatMs: positiveInteger(env, 'LOG_HEARTBEAT_MS', 15_000),
    adminToken: optionalBearerSecret(env, 'ADMIN_TOKEN', 16),
    studioTokenSecret: optionalSecret(env, 'STUDIO_TOKEN_SECRET', 32),
    deploymentEnv: env.DEPLOYMENT_ENV || undefined,
    logSourceUrls: { fm: optionalUrl(env, 'LOG_SOURCE_FM_URL'), wfm: optionalUrl(env, 'LOG_SOURCE_WFM_URL') },
    maxUploadBytes: positiveInteger(env, 'MAX_UPLOAD_BYTES', 25 * 1024 * 1024),
    instanceLimits: {
      noteMaxBytes: positiveInteger(env, 'NOTE_MAX_BYTES', 64 * 1024),
      notesMaxPerInstance: positiveInteger(env, 'NOTES_MAX_PER_INSTANCE', 500),
      instanceMaxBytes: positiveInteger(env, 'INSTANCE_MAX_BYTES', 8 * 1024 * 1024),
    },
    auth: authConfig(env),
    flowInlineBudgetMs: wholeNumber(env, 'FLOW_INLINE_BUDGET_MS', 20),
    flowWorkers: { threads: positiveInteger(env, 'FLOW_WORKERS', 4), memoryMb: positiveInteger(env, 'FLOW_WORKER_MEMORY_MB', 128) },
    flowHttp: {
      allowedHosts: list(env, 'FLOW_HTTP_ALLOWED_HOSTS', ALLOWED_HOST, 'host names or IPs (optionally *. and :port)'),
      forwardHeaders: list(env, 'FLOW_HTTP_FORWARD_HEADERS', HEADER_NAME, 'header names'),
    },
    flowHttpMaxCallsPerRequest: positiveInteger(env, 'FLOW_HTTP_MAX_CALLS_PER_REQUEST', 50),
    dataLimits: {
      maxConditions: positiveInteger(env, 'DATA_FILTER_MAX_CONDITIONS', 200),
      maxRegexes: wholeNumber(env, 'DATA_FILTER_MAX_REGEXES', 10),
      maxFilterBytes: positiveInteger(env, 'DATA_FILTER_MAX_BYTES', 16_384),
      maxSearchTests: positiveInteger(env, 'DATA_SEARCH_MAX_TESTS', 50_000),
    },
    webhooks: {
      allowedHosts: list(env, 'WEBHOOK_ALLOWED_HOSTS', ALLOWED_HOST, 'host names or IPs (optionally *. and :port)'),
      timeoutMs: positiveInteger(env, 'WEBHOOK_TIMEOUT_MS', 10_000),
      backoffMs: positiveInteger(env, 'WEBHOOK_BACKOFF_MS', 1_000),
    },
    mongodbMaxTimeMs: positiveInteger(env, 'MONGODB_MAX_TIME_MS', 10_000),
    maxJsonDepth: positiveInteger(env, 'MAX_JSON_DEPTH', 64),
    telemetry: {
      metricsEnabled: oneOf(env, 'METRICS_ENABLED', ['true', 'false'], 'true') === 'true',
      metricsToken: optionalBearerSecret(env, 'METRICS_TOKEN', 16),
      otlpEndpoint: optionalUrl(env, 'OTEL_EXPORTER_OTLP_ENDPOINT'),
      otlpTracesEndpoint: optionalUrl(env, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT'),
      otlpProtocol: oneOf(env, 'OTEL_EXPORTER_OTLP_PROTOCOL', OTLP_PROTOCOLS, 'http/protobuf'),
      serviceName: optionalText(env, 'OTEL_SERVICE_NAME'),
    },
  }
}
