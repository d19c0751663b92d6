import t from 'tap'
import { type Config, parseConfig } from './config.js'

t.test('defaults follow the README configuration table when nothing is set', async (t) => {
  const config = parseConfig({}, '/srv/app')
  t.same(config, {
    gatewayPort: 3000,
    enginePort: 3001,
    host: '127.0.0.1',
    engineUrl: 'http://127.0.0.1:3001',
    engineSocket: undefined,
    allInOneGateway: 'main',
    dataDir: '/srv/app/.data',
    mongodbUri: undefined,
    allowGatewayEmbeddedStore: false,
    logLevel: 'info',
    development: false,
    lockTtlSeconds: 28800,
    flowTimeoutMs: 10000,
    proxyTimeoutScale: 1,
    batchBackoffMs: 1000,
    batchPollMs: 1000,
    batchLeaseMs: 60000,
    batchRetentionHours: 168,
    idempotencyTtlHours: 24,
    historyRetentionDays: undefined,
    cachePollMs: 1000,
    externalTaskPollMs: 500,
    logHeartbeatMs: 15000,
    adminToken: undefined,
    studioTokenSecret: undefined,
    deploymentEnv: undefined,
    logSourceUrls: { fm: undefined, wfm: undefined },
    maxUploadBytes: 26214400,
    instanceLimits: { noteMaxBytes: 65536, notesMaxPerInstance: 500, instanceMaxBytes: 8388608 },
    auth: { mode: 'header' },
    flowInlineBudgetMs: 20,
    flowWorkers: { threads: 4, memoryMb: 128 },
    flowHttp: { allowedHosts: [], forwardHeaders: [] },
    flowHttpMaxCallsPerRequest: 50,
    dataLimits: { maxConditions: 200, maxRegexes: 10, maxFilterBytes: 16_384, maxSearchTests: 50_000 },
    webhooks: { allowedHosts: [], timeoutMs: 10000, backoffMs: 1000 },
    mongodbMaxTimeMs: 10000,
    maxJsonDepth: 64,
    telemetry: {
      metricsEnabled: true,
      metricsToken: undefined,
      otlpEndpoint: undefined,
      otlpTracesEndpoint: undefined,
      otlpProtocol: 'http/protobuf',
      serviceName: undefined,
    },
  })
})

t.test('ENGINE_URL defaults to the configured engine port', async (t) => {
  t.equal(parseConfig({ ENGINE_PORT: '4100' }).engineUrl, 'http://127.0.0.1:4100')
  t.equal(parseConfig({ ENGINE_URL: 'http://engine.internal:80/' }).engineUrl, 'http://engine.internal:80')
})

t.test('ENGINE_SOCKET is a socket path, resolved like DATA_DIR and short enough for a Unix socket', async (t) => {
  t.equal(parseConfig({ ENGINE_SOCKET: '/run/workflow/engine.sock' }).engineSocket, '/run/workflow/engine.sock')
  t.equal(parseConfig({ ENGINE_SOCKET: 'engine.sock' }, '/srv/app').engineSocket, '/srv/app/engine.sock')
  t.equal(parseConfig({ ENGINE_SOCKET: '' }).engineSocket, undefined)
  const tooLong = `/run/${'s'.repeat(103)}`
  t.throws(() => parseConfig({ ENGINE_SOCKET: tooLong }), {
    message: `Invalid configuration: ENGINE_SOCKET must be a socket path of at most 107 bytes once resolved, got "${tooLong}"`,
  })
  t.equal(parseConfig({ ENGINE_SOCKET: tooLong.slice(0, -1) }).engineSocket, tooLong.slice(0, -1), '107 bytes fit')
})

t.test('ALL_IN_ONE_GATEWAY=thread puts the gateway of the all-in-one on a thread of its own; nothing else does', async (t) => {
  t.equal(parseConfig({ ALL_IN_ONE_GATEWAY: 'thread' }).allInOneGateway, 'thread')
  t.throws(() => parseConfig({ ALL_IN_ONE_GATEWAY: 'worker' }), {
    message: 'Invalid configuration: ALL_IN_ONE_GATEWAY must be one of main, thread, got "worker"',
  })
})

t.test('MONGODB_URI selects MongoDB and is kept as given', async (t) => {
  t.equal(parseConfig({ MONGODB_URI: 'mongodb://db:27017/wf?replicaSet=rs0' }).mongodbUri, 'mongodb://db:27017/wf?replicaSet=rs0')
})

t.test('a bad value is rejected with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, string]> = [
    [{ GATEWAY_PORT: 'eighty' }, 'Invalid configuration: GATEWAY_PORT must be a port number from 0 to 65535, got "eighty"'],
    [{ ENGINE_PORT: '70000' }, 'Invalid configuration: ENGINE_PORT must be a port number from 0 to 65535, got "70000"'],
    [{ ENGINE_URL: 'not a url' }, 'Invalid configuration: ENGINE_URL must be a URL, got "not a url"'],
    [{ ENGINE_URL: 'ftp://engine' }, 'Invalid configuration: ENGINE_URL must use http: or https:, got "ftp:"'],
    [{ MONGODB_URI: 'postgres://db' }, 'Invalid configuration: MONGODB_URI must use mongodb: or mongodb+srv:, got "postgres:"'],
    [{ LOG_LEVEL: 'loud' }, 'Invalid configuration: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent, got "loud"'],
    [{ LOCK_TTL_SECONDS: '0' }, 'Invalid configuration: LOCK_TTL_SECONDS must be a positive integer, got "0"'],
    [{ FLOW_TIMEOUT_MS: '2.5s' }, 'Invalid configuration: FLOW_TIMEOUT_MS must be a positive integer, got "2.5s"'],
    [{ PROXY_TIMEOUT_SCALE: '0' }, 'Invalid configuration: PROXY_TIMEOUT_SCALE must be a positive number, got "0"'],
    [{ PROXY_TIMEOUT_SCALE: '1e-3' }, 'Invalid configuration: PROXY_TIMEOUT_SCALE must be a positive number, got "1e-3"'],
    [{ BATCH_BACKOFF_MS: '-5' }, 'Invalid configuration: BATCH_BACKOFF_MS must be a positive integer, got "-5"'],
    [{ BATCH_POLL_MS: '0' }, 'Invalid configuration: BATCH_POLL_MS must be a positive integer, got "0"'],
    [{ BATCH_LEASE_MS: '1m' }, 'Invalid configuration: BATCH_LEASE_MS must be a positive integer, got "1m"'],
    [{ BATCH_RETENTION_HOURS: 'forever' }, 'Invalid configuration: BATCH_RETENTION_HOURS must be a positive number, got "forever"'],
    [{ IDEMPOTENCY_TTL_HOURS: '-1' }, 'Invalid configuration: IDEMPOTENCY_TTL_HOURS must be a positive number, got "-1"'],
    [{ HISTORY_RETENTION_DAYS: '0' }, 'Invalid configuration: HISTORY_RETENTION_DAYS must be a positive number, got "0"'],
    [{ CACHE_POLL_MS: '1s' }, 'Invalid configuration: CACHE_POLL_MS must be a positive integer, got "1s"'],
    [{ LOG_HEARTBEAT_MS: '0' }, 'Invalid configuration: LOG_HEARTBEAT_MS must be a positive integer, got "0"'],
    [{ ADMIN_TOKEN: 'short' }, 'Invalid configuration: ADMIN_TOKEN must be at least 16 characters long'],
    [{ STUDIO_TOKEN_SECRET: 'too-short-for-hs256' }, 'Invalid configuration: STUDIO_TOKEN_SECRET must be at least 32 characters long'],
    [{ LOG_SOURCE_WFM_URL: 'engine:3001' }, 'Invalid configuration: LOG_SOURCE_WFM_URL must use http: or https:, got "engine:"'],
    [{ MAX_UPLOAD_BYTES: '25MB' }, 'Invalid configuration: MAX_UPLOAD_BYTES must be a positive integer, got "25MB"'],
    [{ MAX_JSON_DEPTH: '0' }, 'Invalid configuration: MAX_JSON_DEPTH must be a positive integer, got "0"'],
  ]
  for (const [env, message] of cases) {
    const variable = Object.keys(env)[0]!
    t.throws(() => parseConfig(env), { name: 'ConfigError', variable, message }, `${variable} is named`)
  }
})

/** Variables read as given: [the variable, its value, the config field it sets, what the field then holds]. */
const readAsGiven: Array<[variable: string, value: string, field: keyof Config, expected: unknown]> = [
  // whole numbers
  ['LOCK_TTL_SECONDS', '60', 'lockTtlSeconds', 60],
  ['FLOW_TIMEOUT_MS', '2500', 'flowTimeoutMs', 2500],
  ['CACHE_POLL_MS', '250', 'cachePollMs', 250],
  ['LOG_HEARTBEAT_MS', '50', 'logHeartbeatMs', 50],
  // a fraction, so tests can shrink the proxy timeouts
  ['PROXY_TIMEOUT_SCALE', '0.001', 'proxyTimeoutScale', 0.001],
  ['PROXY_TIMEOUT_SCALE', '2', 'proxyTimeoutScale', 2],
  // the batch settings, the retention window in (fractional) hours
  ['BATCH_BACKOFF_MS', '5', 'batchBackoffMs', 5],
  ['BATCH_POLL_MS', '20', 'batchPollMs', 20],
  ['BATCH_LEASE_MS', '300', 'batchLeaseMs', 300],
  ['BATCH_RETENTION_HOURS', '0.5', 'batchRetentionHours', 0.5],
  ['HISTORY_RETENTION_DAYS', '30', 'historyRetentionDays', 30],
  // switches
  ['ALLOW_GATEWAY_EMBEDDED_STORE', 'true', 'allowGatewayEmbeddedStore', true],
  // strings
  ['ADMIN_TOKEN', 'admin-token-0123456789', 'adminToken', 'admin-token-0123456789'],
  ['STUDIO_TOKEN_SECRET', 'studio-secret-0123456789abcdef0123456789', 'studioTokenSecret', 'studio-secret-0123456789abcdef0123456789'],
  ['DEPLOYMENT_ENV', 'staging', 'deploymentEnv', 'staging'],
]

t.test('each variable read as given sets its config field', async (t) => {
  for (const [variable, value, field, expected] of readAsGiven) t.same(parseConfig({ [variable]: value })[field], expected, variable)
})

t.test('the log sources are read as given, without a trailing slash', async (t) => {
  const config = parseConfig({
    LOG_SOURCE_FM_URL: 'http://gateway-2:3000/cloud/serviceLog/fm',
    LOG_SOURCE_WFM_URL: 'http://engine:3001/internal/serviceLog/',
  })
  t.same(config.logSourceUrls, { fm: 'http://gateway-2:3000/cloud/serviceLog/fm', wfm: 'http://engine:3001/internal/serviceLog' })
})

t.test('NODE_ENV=development turns on development mode', async (t) => {
  t.equal(parseConfig({ NODE_ENV: 'development' }).development, true)
  t.equal(parseConfig({ NODE_ENV: 'production', ALLOW_HEADER_AUTH: 'true' }).development, false)
})

const SECRET = 'jwt-secret-0123456789abcdef0123456789'

t.test('AUTH_MODE=jwt reads its key source, issuer, audience and user claim', async (t) => {
  t.same(parseConfig({ AUTH_MODE: 'jwt', JWT_SECRET: SECRET }).auth, {
    mode: 'jwt',
    jwt: {
      keys: { secret: SECRET },
      issuer: undefined,
      audience: undefined,
      userClaim: 'sub',
      maxTokenAgeSeconds: 86_400,
      clockSkewSeconds: 60,
    },
  })
  t.same(
    parseConfig({
      AUTH_MODE: 'jwt',
      JWT_JWKS_URL: 'https://id.example.com/.well-known/jwks.json',
      JWT_ISSUER: 'https://id.example.com/',
      JWT_AUDIENCE: 'workflow',
      JWT_USER_CLAIM: 'preferred_username',
      JWT_MAX_TOKEN_AGE: '15m',
      JWT_CLOCK_SKEW_S: '5',
    }).auth,
    {
      mode: 'jwt',
      jwt: {
        keys: { jwksUrl: 'https://id.example.com/.well-known/jwks.json' },
        issuer: 'https://id.example.com/',
        audience: 'workflow',
        userClaim: 'preferred_username',
        maxTokenAgeSeconds: 900,
        clockSkewSeconds: 5,
      },
    },
  )
  for (const [raw, seconds] of [
    ['3600', 3600],
    ['90s', 90],
    ['2h', 7200],
    ['7d', 604_800],
  ] as const) {
    t.match(
      parseConfig({ AUTH_MODE: 'jwt', JWT_SECRET: SECRET, JWT_MAX_TOKEN_AGE: raw }).auth,
      { jwt: { maxTokenAgeSeconds: seconds } },
      raw,
    )
  }
  for (const raw of ['0', '24x', '-1h', '1.5h']) {
    t.throws(
      () => parseConfig({ AUTH_MODE: 'jwt', JWT_SECRET: SECRET, JWT_MAX_TOKEN_AGE: raw }),
      { name: 'ConfigError', variable: 'JWT_MAX_TOKEN_AGE' },
      raw,
    )
  }
  t.throws(
    () => parseConfig({ JWT_MAX_TOKEN_AGE: '1h' }),
    { name: 'ConfigError', variable: 'JWT_MAX_TOKEN_AGE' },
    'a jwt setting without jwt mode',
  )
  t.same(parseConfig({ AUTH_MODE: 'jwt', JWT_SECRET: SECRET, NODE_ENV: 'production' }).auth.mode, 'jwt', 'jwt mode starts in production')
})

t.test('AUTH_MODE=header refuses NODE_ENV=production unless ALLOW_HEADER_AUTH=true', async (t) => {
  t.throws(() => parseConfig({ NODE_ENV: 'production' }), {
    name: 'ConfigError',
    variable: 'AUTH_MODE',
    message:
      'Invalid configuration: AUTH_MODE is header (the user header is trusted as sent), which ' +
      'NODE_ENV=production refuses: set AUTH_MODE=jwt, or ALLOW_HEADER_AUTH=true behind an authenticating proxy',
  })
  t.throws(() => parseConfig({ NODE_ENV: 'production', AUTH_MODE: 'header', ALLOW_HEADER_AUTH: 'false' }), {
    name: 'ConfigError',
    variable: 'AUTH_MODE',
    message: /NODE_ENV=production refuses/,
  })
  t.same(parseConfig({ NODE_ENV: 'production', ALLOW_HEADER_AUTH: 'true' }).auth, { mode: 'header' })
  t.same(parseConfig({ NODE_ENV: 'development' }).auth, { mode: 'header' }, 'development keeps the default')
})

t.test('bad authentication settings are refused with a message naming the variable', async (t) => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ AUTH_MODE: 'oauth' }, 'AUTH_MODE', 'Invalid configuration: AUTH_MODE must be one of header, jwt, got "oauth"'],
    [{ AUTH_MODE: 'jwt' }, 'AUTH_MODE', 'Invalid configuration: AUTH_MODE jwt needs JWT_JWKS_URL or JWT_SECRET'],
    [
      { AUTH_MODE: 'jwt', JWT_SECRET: 'short-secret' },
      'JWT_SECRET',
      'Invalid configuration: JWT_SECRET must be at least 32 characters long',
    ],
    [
      { AUTH_MODE: 'jwt', JWT_SECRET: ' '.repeat(40) },
      'JWT_SECRET',
      'Invalid configuration: JWT_SECRET must not be blank or whitespace only',
    ],
    [
      { AUTH_MODE: 'jwt', JWT_SECRET: SECRET, JWT_JWKS_URL: 'https://id.example.com/jwks' },
      'JWT_SECRET',
      'Invalid configuration: JWT_SECRET and JWT_JWKS_URL are both set: choose one key source',
    ],
    [
      { AUTH_MODE: 'jwt', JWT_JWKS_URL: 'ftp://id.example.com/jwks' },
      'JWT_JWKS_URL',
      'Invalid configuration: JWT_JWKS_URL must use http: or https:, got "ftp:"',
    ],
    [
      { AUTH_MODE: 'jwt', JWT_SECRET: SECRET, JWT_ISSUER: '   ' },
      'JWT_ISSUER',
      'Invalid configuration: JWT_ISSUER must not be blank or whitespace only',
    ],
    [
      { JWT_SECRET: SECRET },
      'JWT_SECRET',
      'Invalid configuration: JWT_SECRET is set but AUTH_MODE is not jwt: set AUTH_MODE=jwt or remove it',
    ],
    [
      { AUTH_MODE: 'header', JWT_JWKS_URL: 'https://id.example.com/jwks' },
      'JWT_JWKS_URL',
      'Invalid configuration: JWT_JWKS_URL is set but AUTH_MODE is not jwt: set AUTH_MODE=jwt or remove it',
    ],
    [{ ALLOW_HEADER_AUTH: 'yes' }, 'ALLOW_HEADER_AUTH', 'Invalid configuration: ALLOW_HEADER_AUTH must be one of true, false, got "yes"'],
  ]
  for (const [env, variable, message] of cases) t.throws(() => parseConfig(env), { name: 'ConfigError', variable, message }, message)
})

t.test('blank or whitespace-only secrets are refused at start-up, not taken as a token', async (t) => {
  const cases: Array<[Record<string, string>, string, string]> = [
    [{ ADMIN_TOKEN: ' '.repeat(20) }, 'ADMIN_TOKEN', 'Invalid configuration: ADMIN_TOKEN must not be blank or whitespace only'],
    [{ ADMIN_TOKEN: '' }, 'ADMIN_TOKEN', 'Invalid configuration: ADMIN_TOKEN must not be blank or whitespace only'],
    [{ ADMIN_TOKEN: '\t\n'.repeat(10) }, 'ADMIN_TOKEN', 'Invalid configuration: ADMIN_TOKEN must not be blank or whitespace only'],
    [
      { ADMIN_TOKEN: 'admin token with spaces 0123' },
      'ADMIN_TOKEN',
      'Invalid configuration: ADMIN_TOKEN must not contain whitespace (it is sent as a bearer token)',
    ],
    [
      { STUDIO_TOKEN_SECRET: ' '.repeat(40) },
      'STUDIO_TOKEN_SECRET',
      'Invalid configuration: STUDIO_TOKEN_SECRET must not be blank or whitespace only',
    ],
    [{ STUDIO_TOKEN_SECRET: '' }, 'STUDIO_TOKEN_SECRET', 'Invalid configuration: STUDIO_TOKEN_SECRET must not be blank or whitespace only'],
  ]
  for (const [env, variable, message] of cases)
    t.throws(() => parseConfig(env), { name: 'ConfigError', variable, message }, JSON.stringify(env))
})

t.test('FLOW_HTTP_ALLOWED_HOSTS and FLOW_HTTP_FORWARD_HEADERS are comma-separated lists, each item checked', async (t) => {
  const config = parseConfig({
    FLOW_HTTP_ALLOWED_HOSTS: ' API.partner.example , *.internal.example:8443,10.0.0.5,[::1]:9000 ',
    FLOW_HTTP_FORWARD_HEADERS: 'Authorization,x-trace',
  })
  t.same(config.flowHttp, {
    allowedHosts: ['api.partner.example', '*.internal.example:8443', '10.0.0.5', '[::1]:9000'],
    forwardHeaders: ['authorization', 'x-trace'],
  })
  t.throws(() => parseConfig({ FLOW_HTTP_ALLOWED_HOSTS: 'http://api.example' }), {
    variable: 'FLOW_HTTP_ALLOWED_HOSTS',
    message: /got "http:\/\/api.example"/,
  })
  t.throws(() => parseConfig({ FLOW_HTTP_ALLOWED_HOSTS: 'api.*.example' }), { name: 'ConfigError', variable: 'FLOW_HTTP_ALLOWED_HOSTS' })
  t.throws(() => parseConfig({ FLOW_HTTP_FORWARD_HEADERS: 'bad header' }), { name: 'ConfigError', variable: 'FLOW_HTTP_FORWARD_HEADERS' })
})

t.test('FLOW_INLINE_BUDGET_MS is a whole number, 0 sending every flow function to the worker pool', async (t) => {
  t.equal(parseConfig({ FLOW_INLINE_BUDGET_MS: '0' }).flowInlineBudgetMs, 0)
  t.equal(parseConfig({ FLOW_INLINE_BUDGET_MS: '5' }).flowInlineBudgetMs, 5)
  for (const value of ['-1', '2.5', 'fast'])
    t.throws(() => parseConfig({ FLOW_INLINE_BUDGET_MS: value }), {
      name: 'ConfigError',
      variable: 'FLOW_INLINE_BUDGET_MS',
      message: /must be a whole number/,
    })
})

t.test('FLOW_WORKERS, FLOW_WORKER_MEMORY_MB and MONGODB_MAX_TIME_MS are positive whole numbers', async (t) => {
  const config = parseConfig({ FLOW_WORKERS: '3', FLOW_WORKER_MEMORY_MB: '64', MONGODB_MAX_TIME_MS: '2000' })
  t.same([config.flowWorkers, config.mongodbMaxTimeMs], [{ threads: 3, memoryMb: 64 }, 2000])
  for (const variable of ['FLOW_WORKERS', 'FLOW_WORKER_MEMORY_MB', 'MONGODB_MAX_TIME_MS'])
    t.throws(() => parseConfig({ [variable]: '0' }), { name: 'ConfigError', variable })
})

t.test('request budgets: FLOW_HTTP_MAX_CALLS_PER_REQUEST and the DATA_* bounds are positive whole numbers', async (t) => {
  const budgets = { FLOW_HTTP_MAX_CALLS_PER_REQUEST: '7', DATA_FILTER_MAX_CONDITIONS: '30', DATA_FILTER_MAX_BYTES: '1024' }
  const config = parseConfig({ ...budgets, DATA_FILTER_MAX_REGEXES: '0', DATA_SEARCH_MAX_TESTS: '5000' })
  t.equal(config.flowHttpMaxCallsPerRequest, 7)
  t.same(
    config.dataLimits,
    { maxConditions: 30, maxRegexes: 0, maxFilterBytes: 1024, maxSearchTests: 5000 },
    'no $regex may be allowed at all',
  )
  for (const variable of [...Object.keys(budgets), 'DATA_SEARCH_MAX_TESTS'])
    t.throws(() => parseConfig({ [variable]: '0' }), { name: 'ConfigError', variable })
})

t.test('observability: METRICS_ENABLED, METRICS_TOKEN and the standard OpenTelemetry variables', async (t) => {
  const config = parseConfig({
    METRICS_ENABLED: 'false',
    METRICS_TOKEN: 'a-scrape-token-of-some-length',
    OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'engine-eu-1',
  })
  t.same(config.telemetry, {
    metricsEnabled: false,
    metricsToken: 'a-scrape-token-of-some-length',
    otlpEndpoint: 'http://collector:4318',
    otlpTracesEndpoint: undefined,
    otlpProtocol: 'http/json',
    serviceName: 'engine-eu-1',
  })
  t.throws(
    () => parseConfig({ OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' }),
    /OTEL_EXPORTER_OTLP_PROTOCOL must be one of http\/protobuf, http\/json/,
  )
  t.throws(() => parseConfig({ METRICS_TOKEN: 'short' }), /METRICS_TOKEN must be at least 16 characters/)
  t.throws(() => parseConfig({ METRICS_ENABLED: 'yes' }), /METRICS_ENABLED must be one of true, false/)
})

t.test(
  'WEBHOOK_ALLOWED_HOSTS takes the syntax of FLOW_HTTP_ALLOWED_HOSTS; WEBHOOK_TIMEOUT_MS and WEBHOOK_BACKOFF_MS default to 10000 and 1000',
  async (t) => {
    t.same(parseConfig({}).webhooks, { allowedHosts: [], timeoutMs: 10_000, backoffMs: 1_000 })
    const config = parseConfig({
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1, *.hooks.internal:8443',
      WEBHOOK_TIMEOUT_MS: '2500',
      WEBHOOK_BACKOFF_MS: '50',
    })
    t.same(config.webhooks, { allowedHosts: ['127.0.0.1', '*.hooks.internal:8443'], timeoutMs: 2_500, backoffMs: 50 })
    t.throws(() => parseConfig({ WEBHOOK_ALLOWED_HOSTS: 'http://hooks.example' }), {
      name: 'ConfigError',
      variable: 'WEBHOOK_ALLOWED_HOSTS',
    })
    t.throws(() => parseConfig({ WEBHOOK_TIMEOUT_MS: '0' }), { name: 'ConfigError', variable: 'WEBHOOK_TIMEOUT_MS' })
    t.throws(() => parseConfig({ WEBHOOK_BACKOFF_MS: 'soon' }), { name: 'ConfigError', variable: 'WEBHOOK_BACKOFF_MS' })
  },
)
