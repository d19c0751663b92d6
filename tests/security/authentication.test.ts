/**
 * Authentication (docs/reference/identity.md#identity-modes): known attacks on it replayed through the gateway
 * (and the engine, which checks tokens itself), in AUTH_MODE=jwt and header mode.
 */
import t from 'tap'
import type { JwtConfig } from '../../lib/config/config.js'
import { clientLine } from '../../plugins/logging/client-lines.js'
import { createLogger } from '../../plugins/logging/logger.js'
import { LogRing, ringDestination } from '../../plugins/logging/ring.js'
import type { Store } from '../../store/port.js'
import { Collections, type StoredUser } from '../../store/collections.js'
import { spawnService } from '../../services/testing/child-service.js'
import { openEventStream } from '../../services/testing/event-stream.js'
import {
  capturingLogger,
  openTestStore,
  type RunningService,
  startService,
  type Teardown,
  tempDir,
} from '../../services/testing/harness.js'
import { insertModelRequest } from '../../services/testing/models.js'
import { bearerFor, jwtAuthConfig, tokenFor } from '../../services/testing/tokens.js'
import { createTestUser } from '../../services/testing/users.js'
import { deployHrApp, HR, startHrEngine, startLeaveRequest } from '../../services/testing/workflow.js'
import { signStudioToken } from '../../plugins/identity/studio-token.js'

const ADMIN_TOKEN = 'admin-token-0123456789abcdef'
const OTHER = { appId: 'crm', organizationId: 'globex' } as const

interface Answer {
  status: number
  body: { status?: string; data?: unknown; error?: { code: string; message: string }; code?: string; statusCode?: number } & Record<
    string,
    unknown
  >
  headers: Headers
}

async function send(
  url: string,
  method: string,
  path: string,
  options: { headers?: Record<string, string>; body?: unknown } = {},
): Promise<Answer> {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { ...options.headers, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  })
  const text = await response.text()
  return { status: response.status, body: text === '' ? {} : (JSON.parse(text) as Answer['body']), headers: response.headers }
}

interface Users {
  employee: StoredUser
  manager: StoredUser
  admin: StoredUser
  system: StoredUser
  otherEmployee: StoredUser
  otherAdmin: StoredUser
}

async function createUsers(store: Store): Promise<Users> {
  return {
    employee: await createTestUser(store, { ...HR, fullName: 'Eve Employee', swimlanes: ['employee'] }),
    manager: await createTestUser(store, { ...HR, fullName: 'Max Manager', swimlanes: ['manager'] }),
    admin: await createTestUser(store, { ...HR, fullName: 'Ada Admin', roles: ['admin'] }),
    system: await createTestUser(store, { ...HR, fullName: 'Integration Robot', roles: ['user'], isSystemUser: true }),
    otherEmployee: await createTestUser(store, { ...OTHER, fullName: 'Olga Other' }),
    otherAdmin: await createTestUser(store, { ...OTHER, fullName: 'Oscar Other', roles: ['admin'], isSystemUser: true }),
  }
}

interface JwtDeployment {
  store: Store
  users: Users
  engine: RunningService
  gateway: RunningService
}

/** An engine and a gateway in AUTH_MODE=jwt over one store with the HR app, ADMIN_TOKEN set on the gateway. */
async function startJwtDeployment(t: Teardown, jwt: Partial<JwtConfig> = {}): Promise<JwtDeployment> {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const users = await createUsers(store)
  const engine = await startService(t, 'engine', { store, config: jwtAuthConfig(jwt) })
  const gateway = await startService(t, 'gateway', {
    store,
    config: { ...jwtAuthConfig(jwt), engineUrl: engine.url, adminToken: ADMIN_TOKEN },
  })
  return { store, users, engine, gateway }
}

const startBody = { ...HR, processId: 'leave-request', input: { days: 2, reason: 'Trip' } }

/** A compact JWT with `alg: none` and no signature, naming `userId`. */
function unsignedToken(userId: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url')
  return `${part({ alg: 'none', typ: 'JWT' })}.${part({ sub: userId, exp: Math.floor(Date.now() / 1000) + 600 })}.`
}

t.test('jwt mode: the user header alone no longer identifies anyone (finding 3: anyone can act as anyone)', async (t) => {
  const { gateway, engine, users, store } = await startJwtDeployment(t)
  const before = await store.collection(Collections.contexts).countDocuments({})
  const spoofed = await send(gateway.url, 'POST', '/context', { headers: { user: users.employee.userId }, body: startBody })
  t.equal(spoofed.status, 401)
  t.match(
    spoofed.body,
    { status: 'permissionError', data: null, error: { code: 'wm4011' } },
    'the engine refuses it; the gateway answers in the envelope',
  )
  const direct = await send(engine.url, 'POST', '/context', { headers: { user: users.employee.userId }, body: startBody })
  t.match(direct, { status: 401, body: { code: 'wm4011', statusCode: 401 } }, 'the engine checks the token itself (defence in depth)')
  const optional = await send(gateway.url, 'POST', '/external/process/changeStep', {
    headers: { user: users.admin.userId },
    body: { ...HR, processInstanceId: 'p-1', stepId: 'end' },
  })
  t.equal(optional.status, 401, 'routes where the user header is optional need a token too')
  t.equal(await store.collection(Collections.contexts).countDocuments({}), before, 'no instance was started')

  const signed = await send(gateway.url, 'POST', '/context', { headers: await bearerFor(users.employee.userId), body: startBody })
  t.equal(signed.status, 200, 'a token of the user is enough: the user header is optional in jwt mode')
  t.match(signed.body, { status: 'success', data: { context: { processInstance: { initiator: users.employee.userId } } } })
})

t.test('jwt mode: tokens that must not pass are 401 permissionError', async (t) => {
  const { gateway, users } = await startJwtDeployment(t, { issuer: 'https://id.example.org/', audience: 'workflow' })
  const good = { issuer: 'https://id.example.org/', audience: 'workflow' }
  const cases: Array<[string, string]> = [
    ['a token without exp (valid forever otherwise)', await tokenFor(users.employee.userId, { ...good, expiresInSeconds: null })],
    ['an expired token', await tokenFor(users.employee.userId, { ...good, expiresInSeconds: -60 })],
    ['alg none', unsignedToken(users.employee.userId)],
    [
      'a token signed with another secret',
      await tokenFor(users.employee.userId, { ...good, secret: 'another-secret-0123456789abcdef0123456789' }),
    ],
    ['HS512 with the right secret (not the algorithm the key allows)', await tokenFor(users.employee.userId, { ...good, alg: 'HS512' })],
    ['a wrong issuer', await tokenFor(users.employee.userId, { ...good, issuer: 'https://evil.example.org/' })],
    ['no issuer', await tokenFor(users.employee.userId, { audience: 'workflow' })],
    ['a wrong audience', await tokenFor(users.employee.userId, { ...good, audience: 'another-service' })],
    ['not a JWT at all', 'not-a-jwt'],
  ]
  for (const [name, token] of cases) {
    const answer = await send(gateway.url, 'POST', '/context', { headers: { authorization: `Bearer ${token}` }, body: startBody })
    t.equal(answer.status, 401, name)
    t.match(answer.body, { status: 'permissionError', error: { code: 'wm4011' } }, name)
  }
  const ok = await send(gateway.url, 'POST', '/context', { headers: await bearerFor(users.employee.userId, good), body: startBody })
  t.equal(ok.status, 200, 'the right issuer and audience pass')
})

t.test('jwt mode: a valid token of a user the users store does not know is 401', async (t) => {
  const { gateway, engine } = await startJwtDeployment(t)
  const answer = await send(gateway.url, 'POST', '/context', { headers: await bearerFor('nobody-at-all'), body: startBody })
  t.match(answer, { status: 401, body: { status: 'permissionError', error: { code: 'wm4010' } } })
  const direct = await send(gateway.url, 'GET', '/user/listWorkflowUsers?organizationId=acme&appId=hr', {
    headers: await bearerFor('nobody-at-all'),
  })
  t.match(direct, { status: 401, body: { status: 'permissionError', error: { code: 'fm4012' } } }, "the gateway's own routes too")
  t.match(await send(engine.url, 'GET', '/process/p-1', { headers: await bearerFor('nobody-at-all') }), {
    status: 401,
    body: { code: 'wm4010' },
  })
})

t.test(
  'jwt mode: a user header naming another user than the token is 403, and a system user may act as a user of its own tenant only',
  async (t) => {
    const { gateway, users } = await startJwtDeployment(t)
    const asEmployee = await bearerFor(users.employee.userId)
    const other = await send(gateway.url, 'POST', '/context', { headers: { ...asEmployee, user: users.manager.userId }, body: startBody })
    t.match(other, { status: 403, body: { status: 'permissionError', error: { code: 'wm4032' } } }, 'a plain user cannot name another')
    t.equal(
      (await send(gateway.url, 'POST', '/context', { headers: { ...asEmployee, user: users.employee.userId }, body: startBody })).status,
      200,
      'naming oneself is fine',
    )

    const asSystem = await bearerFor(users.system.userId)
    const onBehalf = await send(gateway.url, 'POST', '/context', { headers: { ...asSystem, user: users.employee.userId }, body: startBody })
    t.equal(onBehalf.status, 200, 'a system user acts as a user of its tenant')
    t.match(onBehalf.body, { data: { context: { processInstance: { initiator: users.employee.userId } } } }, 'and the actor is that user')
    for (const [name, userId] of [
      ["another tenant's user", users.otherEmployee.userId],
      ['an unknown user', 'nobody-at-all'],
    ] as const) {
      const refused = await send(gateway.url, 'POST', '/context', { headers: { ...asSystem, user: userId }, body: startBody })
      t.match(refused, { status: 403, body: { status: 'permissionError', error: { code: 'wm4032' } } }, name)
    }
  },
)

t.test('jwt mode, admin routes: ADMIN_TOKEN first; a tenant admin acts only inside its tenant, others are refused', async (t) => {
  const { gateway, users, store } = await startJwtDeployment(t)
  const asAdmin = await bearerFor(users.admin.userId)
  const newUser = (tenant: { appId: string; organizationId: string }, fullName: string) => ({
    fullName,
    unit: { id: 'u', name: 'U' },
    roles: ['user'],
    ...tenant,
  })

  t.match(
    await send(gateway.url, 'POST', '/user/createUser', { body: newUser(HR, 'No Token') }),
    { status: 401, body: { status: 'permissionError', error: { code: 'fm4012' } } },
    'no token: 401',
  )
  t.match(
    await send(gateway.url, 'POST', '/user/createUser', {
      headers: await bearerFor(users.employee.userId),
      body: newUser(HR, 'Not Admin'),
    }),
    { status: 403, body: { error: { code: 'fm4030' } } },
    'a token of a non-admin: 403',
  )
  t.equal(
    (
      await send(gateway.url, 'POST', '/user/createUser', {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        body: newUser(OTHER, 'By Operator'),
      })
    ).status,
    200,
    'ADMIN_TOKEN still does everything',
  )

  const own = await send(gateway.url, 'POST', '/user/createUser', { headers: asAdmin, body: newUser(HR, 'Own Tenant') })
  t.match(own, { status: 200, body: { data: { ...HR, fullName: 'Own Tenant' } } }, 'a tenant admin creates users of its tenant')
  const users0 = await store.collection(Collections.users).countDocuments({})
  const crossings: Array<[string, string, string, unknown?]> = [
    ['createUser in another tenant', 'POST', '/user/createUser', newUser(OTHER, 'Cross Tenant')],
    [
      'updateUser of another tenant naming it',
      'POST',
      '/user/updateUser',
      { ...newUser(OTHER, 'Hijacked'), userId: users.otherEmployee.userId },
    ],
    [
      "updateUser of another tenant's user moved into its own",
      'POST',
      '/user/updateUser',
      { ...newUser(HR, 'Hijacked'), userId: users.otherEmployee.userId },
    ],
    [
      'deleteUser naming another tenant',
      'DELETE',
      `/user/deleteUser?organizationId=${OTHER.organizationId}&appId=${OTHER.appId}`,
      { id: users.otherEmployee.userId },
    ],
    ['listWorkflowUsers of another tenant', 'GET', `/user/listWorkflowUsers?organizationId=${OTHER.organizationId}&appId=${OTHER.appId}`],
    ['insertModel into another tenant', 'POST', '/model/insertModel', insertModelRequest('hr-constants', OTHER)],
    [
      'notify into another tenant',
      'POST',
      '/notify',
      { notificationObject: { processInstance: { processInstanceId: 'pi-other' }, eventType: 'Finished' }, ...OTHER },
    ],
    ['evicting every app cache', 'GET', '/external/cache/all/all/evict'],
  ]
  for (const [name, method, path, body] of crossings) {
    const answer = await send(gateway.url, method, path, { headers: asAdmin, ...(body === undefined ? {} : { body }) })
    t.match(answer, { status: 403, body: { status: 'permissionError', error: { code: 'fm4030' } } }, name)
  }
  t.equal(await store.collection(Collections.users).countDocuments({}), users0, 'no user was created or deleted')
  t.match(
    await store.collection<StoredUser>(Collections.users).findOne({ userId: users.otherEmployee.userId }),
    { fullName: 'Olga Other', ...OTHER },
    "the other tenant's user is unchanged",
  )
  t.equal(
    await store.collection(Collections.models).countDocuments({ appId: OTHER.appId }),
    0,
    'no model was deployed into the other tenant',
  )
  t.equal(await store.collection(Collections.notifications).countDocuments({ _id: 'pi-other' }), 0, 'no notification record was written')

  const deleted = await send(gateway.url, 'DELETE', '/user/deleteUser', { headers: asAdmin, body: { id: users.otherEmployee.userId } })
  t.equal(deleted.status, 404, "deleting another tenant's user without naming the tenant finds nobody")
  const listed = await send(gateway.url, 'GET', '/user/listWorkflowUsers', { headers: asAdmin })
  t.same(
    [...new Set((listed.body.data as StoredUser[]).map((user) => `${user.organizationId}/${user.appId}`))],
    ['acme/hr'],
    'a tenant admin lists its own tenant only',
  )
  t.equal(
    (await send(gateway.url, 'POST', '/model/insertModel', { headers: asAdmin, body: insertModelRequest('hr-constants', HR) })).status,
    200,
    'a tenant admin deploys into its own tenant',
  )
  t.equal(
    (await send(gateway.url, 'GET', '/external/cache/app/all/evict', { headers: asAdmin })).status,
    200,
    "a tenant admin evicts its app's caches",
  )

  // A record of the other tenant is not reachable by naming one's own tenant either.
  await store.collection(Collections.notifications).insertOne({ _id: 'pi-theirs', ...OTHER, eventType: 'Created' })
  const overwrite = await send(gateway.url, 'POST', '/notify', {
    headers: asAdmin,
    body: { notificationObject: { processInstance: { processInstanceId: 'pi-theirs' }, eventType: 'Finished' }, ...HR },
  })
  t.match(overwrite, { status: 403, body: { error: { code: 'fm4030' } } })
  t.match(
    await store.collection(Collections.notifications).findOne({ _id: 'pi-theirs' }),
    { eventType: 'Created', ...OTHER },
    "the other tenant's record is unchanged",
  )
})

t.test('header mode is refused with NODE_ENV=production unless ALLOW_HEADER_AUTH=true, and warns at start in both services', async (t) => {
  const refused = spawnService('all-in-one', { DATA_DIR: tempDir(t), NODE_ENV: 'production' })
  const exit = await refused.exited
  t.equal(exit.code, 1, 'exit 1')
  t.match(exit.stderr, /AUTH_MODE is header .*NODE_ENV=production refuses: set AUTH_MODE=jwt, or ALLOW_HEADER_AUTH=true/)

  const allowed = spawnService('all-in-one', { DATA_DIR: tempDir(t), NODE_ENV: 'production', ALLOW_HEADER_AUTH: 'true' })
  t.teardown(async () => {
    allowed.child.kill('SIGTERM')
    await allowed.exited
  })
  await allowed.ready
  const warnings = allowed.stdoutLines
    .map((line) => JSON.parse(line) as { level: number; msg: string; service?: string })
    .filter((line) => line.level === 40 && /AUTH_MODE=header/.test(line.msg))
  t.same(
    warnings.map((line) => line.service).sort(),
    ['workflow-engine', 'workflow-gateway'],
    'each service warns that the user header is trusted',
  )

  const { logger, lines } = capturingLogger('warn')
  await startService(t, 'engine', { logger, config: jwtAuthConfig() })
  t.notOk(
    lines.some((line) => /AUTH_MODE=header/.test(String(line.msg))),
    'no warning in jwt mode',
  )
})

t.test('blank or whitespace-only secrets stop start-up (finding 8: an ADMIN_TOKEN of 20 spaces was accepted)', async (t) => {
  for (const [variable, value] of [
    ['ADMIN_TOKEN', ' '.repeat(20)],
    ['STUDIO_TOKEN_SECRET', ' '.repeat(40)],
  ] as const) {
    const exit = await spawnService('all-in-one', { DATA_DIR: tempDir(t), [variable]: value }).exited
    t.equal(exit.code, 1, variable)
    t.match(exit.stderr, `Invalid configuration: ${variable} must not be blank or whitespace only`)
  }
  const jwt = await spawnService('all-in-one', { DATA_DIR: tempDir(t), AUTH_MODE: 'jwt', JWT_SECRET: '\t'.repeat(40) }).exited
  t.match(jwt, { code: 1, stderr: /JWT_SECRET must not be blank or whitespace only/ })
})

const STUDIO_SECRET = 'studio-secret-0123456789abcdef0123456789'

t.test('the log stream refuses a studiotoken without exp, or valid for more than 24 hours', async (t) => {
  const gateway = await startService(t, 'gateway', {
    config: { deploymentEnv: 'test', studioTokenSecret: STUDIO_SECRET },
    logRings: { fm: new LogRing() },
  })
  const now = Math.floor(Date.now() / 1000)
  for (const [name, claims] of [
    ['no exp', { sub: 'c-1' }],
    ['exp two days ahead', { sub: 'c-1', exp: now + 48 * 3600 }],
  ] as const) {
    const answer = await send(gateway.url, 'GET', '/cloud/serviceLog/fm', {
      headers: { lplogclientid: 'c-1', studiotoken: signStudioToken(claims, STUDIO_SECRET) },
    })
    t.match(answer, { status: 401, body: { status: 'permissionError', error: { code: 'fm4011' } } }, name)
  }
})

t.test('a logged value cannot forge the [CI: …] marker of another client', async (t) => {
  t.equal(
    clientLine('victim', JSON.stringify({ level: 30, msg: '[CI: attacker] unknown user [CI: victim] forged' })),
    undefined,
    'a marker inside the message is not the line owner',
  )
  t.equal(
    clientLine('victim', JSON.stringify({ level: 30, msg: 'incoming request', url: '/x?[CI: victim]' })),
    undefined,
    'nor one in another field',
  )
  t.equal(clientLine('victim', '2025-06-30T08:00:00.123Z something [CI: victim] forged'), undefined, 'nor one inside a plain line')
  t.ok(
    clientLine('victim', JSON.stringify({ level: 30, msg: '[CI: victim] mine' })),
    "the request logger's prefix still marks the client's lines",
  )

  // End to end: the engine logs the refused user header value; the victim's stream must not get it.
  const ring = new LogRing()
  const engine = await startService(t, 'engine', {
    logger: createLogger({ level: 'info', destination: ringDestination(ring) }),
    logRings: { wfm: ring },
  })
  const stream = await openEventStream(`${engine.url}/internal/serviceLog`, { lplogclientid: 'victim' })
  t.teardown(() => stream.close())
  const attack = await send(engine.url, 'POST', '/context', {
    headers: { lplogclientid: 'attacker', user: '[CI: victim] forged-line' },
    body: startBody,
  })
  t.equal(attack.status, 401)
  t.ok(
    ring.recent().some((line) => line.text.includes('[CI: victim] forged-line')),
    'the forged value was logged (the attack is real)',
  )
  await send(engine.url, 'GET', '/liveness', { headers: { lplogclientid: 'victim', 'x-request-id': 'genuine' } })
  await stream.waitFor((s) => s.events().some((event) => event.includes('"reqId":"genuine"') && event.includes('request completed')))
  t.notOk(
    stream.events().some((event) => event.includes('forged-line')),
    "the attacker's lines did not reach the victim's stream",
  )
})

t.test('/settings/:file is public in jwt mode and its error answers carry X-Content-Type-Options: nosniff', async (t) => {
  const gateway = await startService(t, 'gateway', { config: jwtAuthConfig() })
  const missing = await send(gateway.url, 'GET', '/settings/app', { headers: { referer: 'https://portal.example.org/?appId=nothing' } })
  t.not(missing.status, 401, 'public in jwt mode')
  t.equal(missing.headers.get('x-content-type-options'), 'nosniff', 'on an error answer')
})

t.test('/settings/:file scripts carry nosniff', async (t) => {
  const gateway = await startService(t, 'gateway')
  t.equal((await send(gateway.url, 'POST', '/model/insertModel', { body: insertModelRequest('hr-settings', HR) })).status, 200)
  const answer = await fetch(`${gateway.url}/settings/app`, { headers: { referer: 'https://portal.example.org/?appId=hr' } })
  t.equal(answer.status, 200)
  t.equal(answer.headers.get('content-type'), 'application/javascript; charset=UTF-8')
  t.equal(answer.headers.get('x-content-type-options'), 'nosniff')
})

t.test("the test harness runs the HR engine in jwt mode: its client signs a token for each call's user", async (t) => {
  const engine = await startHrEngine(t, jwtAuthConfig())
  const started = await startLeaveRequest(engine, engine.users.employee)
  t.equal(started.status, 200)
  t.match(started.body, { context: { processInstance: { initiator: engine.users.employee.userId } } })
  t.equal(
    (await send(engine.url, 'POST', '/context', { headers: { user: engine.users.employee.userId }, body: startBody })).status,
    401,
    'the user header alone is refused',
  )
})
