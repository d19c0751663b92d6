/**
 * Request hardening through the gateway, configured as production is (AUTH_MODE=jwt, ADMIN_TOKEN,
 * METRICS_TOKEN, no development stacks): idempotency keys belong to their caller, notes and
 * instances have size limits, a malformed upload is the client's 400, the engine's liveness names
 * no tenant, downloads are never sniffed, the example refuses `.EXE` too, and tokens with a
 * far-future `exp` or a future `iat` are refused.
 */
import t, { type Test } from 'tap'
import type { ProcessStartResult, Session } from '../../openapi/generated/schemas.js'
import type { Config } from '../../lib/config/config.js'
import { ContractChecker } from '../../services/testing/contract.js'
import { type Envelope, type GatewayAnswer as Answer, sendToGateway } from '../../services/testing/gateway.js'
import { capturingLogger, openTestStore, startService, testConfig } from '../../services/testing/harness.js'
import { storedInstance } from '../../services/testing/instance-store.js'
import { bearerFor, jwtAuthConfig, tokenFor, type TokenOptions } from '../../services/testing/tokens.js'
import { createHrUsers, deployHrApp, HR, type HrUsers, taskIds } from '../../services/testing/workflow.js'
import type { StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'

const gatewayContract = new ContractChecker('gateway')
const ADMIN_TOKEN = 'admin-token-0123456789abcdef'
const METRICS_TOKEN = 'metrics-token-0123456789abcdef'
const leave = { ...HR, processId: 'leave-request', input: { days: 3, reason: 'Family visit' } }

interface SendOptions {
  body?: unknown
  headers?: Record<string, string>
  token?: TokenOptions
}

async function productionStack(t: Test, config: Partial<Config> = {}) {
  const store: Store = await openTestStore(t)
  await deployHrApp(store)
  const users: HrUsers = await createHrUsers(store)
  const base = testConfig()
  const production: Partial<Config> = {
    ...jwtAuthConfig(),
    development: false,
    adminToken: ADMIN_TOKEN,
    telemetry: { ...base.telemetry, metricsToken: METRICS_TOKEN },
    ...config,
  }
  const engineLog = capturingLogger('info')
  const gatewayLog = capturingLogger('info')
  const engine = await startService(t, 'engine', { store, config: production, logger: engineLog.logger })
  const gateway = await startService(t, 'gateway', { store, config: { ...production, engineUrl: engine.url }, logger: gatewayLog.logger })

  async function send<Data = unknown>(operationId: string, path: string, as: StoredUser, options: SendOptions = {}): Promise<Answer<Data>> {
    const headers: Record<string, string> = { ...(await bearerFor(as.userId, options.token)), ...options.headers }
    const method = options.body === undefined ? 'GET' : 'POST'
    return sendToGateway<Data>(t, gateway.url, { operationId, method, path, headers, body: options.body })
  }

  async function startLeave(as: StoredUser = users.employee): Promise<Session> {
    const started = await send<Session>('openContext', '/context', as, { body: leave })
    if (started.status !== 200) throw new Error(`the leave request did not start: ${JSON.stringify(started.body)}`)
    return started.body.data
  }

  /** Log lines at error level or above (pino: 50 error, 60 fatal). */
  const errorLines = () => [...engineLog.lines, ...gatewayLog.lines].filter((line) => Number(line.level) >= 50)

  return { store, users, engineUrl: engine.url, gatewayUrl: gateway.url, send, startLeave, errorLines }
}

t.test(
  "an idempotency key repeated by another user of the tenant starts their own instance, never replays the first caller's",
  async (t) => {
    const stack = await productionStack(t)
    const { employee, colleague } = stack.users
    const start = (as: StoredUser) =>
      stack.send<ProcessStartResult>('startProcess', '/process/start', as, { body: leave, headers: { 'idempotency-key': 'k-1' } })
    const first = await start(employee)
    t.equal(first.status, 200)
    const mine = first.body.data.context.processInstance
    const other = await start(colleague)
    t.equal(other.status, 200)
    t.equal(other.headers.get('idempotent-replayed'), null, 'no replay to another user')
    t.not(other.body.data.context.processInstance.processInstanceId, mine.processInstanceId)
    t.notMatch(JSON.stringify(other.body), mine.businessKey, "nothing of the employee's instance")
    t.equal((await start(employee)).headers.get('idempotent-replayed'), 'true', 'the employee still gets their own answer again')
  },
)

t.test('notes and instances have size limits: 413 wm3092, 400 wm3093, 413 wm3045, and nothing is stored', async (t) => {
  const stack = await productionStack(t, { instanceLimits: { noteMaxBytes: 20_000, notesMaxPerInstance: 3, instanceMaxBytes: 60_000 } })
  const { employee } = stack.users
  const session = await stack.startLeave()
  const ids = taskIds(session)
  const id = ids.processInstanceId
  const addNote = (note: string, on = ids) => stack.send<Session>('addNote', '/note/add', employee, { body: { ...HR, ...on, note } })

  const before = await storedInstance(stack.store, id)
  t.match(
    await addNote('x'.repeat(20_001)),
    { status: 413, body: { status: 'customerror', error: { code: 'wm3092' } } },
    'a note too large',
  )
  // Bytes, not characters: 6,667 three-byte characters are 20,001 bytes.
  t.match(await addNote('€'.repeat(6_667)), { status: 413, body: { error: { code: 'wm3092' } } }, 'counted in UTF-8 bytes')
  t.equal((await storedInstance(stack.store, id)).version, before.version, 'nothing stored')

  for (const n of [1, 2, 3]) t.equal((await addNote(`note ${n}`)).status, 200)
  const full = await storedInstance(stack.store, id)
  t.match(await addNote('one too many'), { status: 400, body: { status: 'customerror', error: { code: 'wm3093' } } })
  const after = await storedInstance(stack.store, id)
  t.equal(after.version, full.version, 'nothing stored')
  t.equal(after.processInstance.notes.length, 3)
  const noteId = after.processInstance.notes[0]?.id ?? ''
  const update = await stack.send('updateNote', '/note/update', employee, {
    body: { ...HR, ...ids, note: { id: noteId, note: 'y'.repeat(20_001) } },
  })
  t.match(update, { status: 413, body: { error: { code: 'wm3092' } } }, 'an update is held to the note limit too')
  const completion = await stack.send('completeAction', '/action/complete', employee, {
    body: {
      ...HR,
      ...ids,
      actionType: 'complete',
      dataInstance: session.context.dataInstance,
      additionalInfo: { activityDescription: 'w'.repeat(20_001) },
    },
  })
  t.match(completion, { status: 413, body: { error: { code: 'wm3092' } } }, "a completion's activityDescription note too")
  t.equal((await storedInstance(stack.store, id)).version, full.version, 'the completion stored nothing either')

  // A second instance: notes within their limits, but together past INSTANCE_MAX_BYTES.
  const other = taskIds(await stack.startLeave())
  t.equal((await addNote('z'.repeat(20_000), other)).status, 200)
  t.equal((await addNote('z'.repeat(20_000), other)).status, 200)
  const large = await storedInstance(stack.store, other.processInstanceId)
  const past = await addNote('z'.repeat(20_000), other)
  t.match(past, { status: 413, body: { status: 'customerror', error: { code: 'wm3045' } } }, 'the instance would be too large')
  t.equal((await storedInstance(stack.store, other.processInstanceId)).version, large.version, 'nothing stored')
  t.same(stack.errorLines(), [], 'refusals are no errors in the log')
})

t.test('a malformed multipart upload is 400 in the envelope, logged below error level', async (t) => {
  const stack = await productionStack(t)
  const response = await fetch(`${stack.gatewayUrl}/file/upload`, {
    method: 'POST',
    headers: { ...(await bearerFor(stack.users.employee.userId)), 'content-type': 'multipart/form-data; boundary=x' },
    body: 'x',
  })
  const body = (await response.json()) as Envelope
  t.equal(response.status, 400)
  t.match(body, { status: 'customerror', error: { code: 'wm4000' } })
  t.same(gatewayContract.errors('uploadFile', response.status, body), [])
  t.same(stack.errorLines(), [], 'no error-level line (no stack) in either log')
})

t.test("the engine's liveness names no app, tenant or job; the gateway's none either", async (t) => {
  const stack = await productionStack(t)
  await stack.startLeave()
  const engine = await fetch(`${stack.engineUrl}/liveness`)
  t.equal(engine.status, 200)
  const text = await engine.text()
  t.same(Object.keys(JSON.parse(text) as object).sort(), ['name', 'status', 'time'])
  t.notMatch(text, /acme|"hr"|batch/i)
  for (const path of ['/liveness', '/healthcheck']) {
    const answer = await fetch(`${stack.gatewayUrl}${path}`)
    t.equal(answer.status, 200, path)
    t.notMatch(await answer.text(), /acme|"hr"|batch/i, `${path} names no tenant`)
  }
})

t.test('downloads are attachments with nosniff; the example refuses executables in any case', async (t) => {
  const stack = await productionStack(t)
  const session = await stack.startLeave()
  const fields = { ...taskIds(session), taskDefinitionKey: 'request', label: 'Scan', fileName: 'page.html' }
  const upload = (fileName: string) => {
    const form = new FormData()
    form.append('fields', JSON.stringify({ ...fields, fileName }))
    form.append('fileBody', new Blob(['<script>alert(1)</script>'], { type: 'text/html' }), fileName)
    return stack.send<{ storageHandle: string }>('uploadFile', '/file/upload', stack.users.employee, { body: form })
  }
  for (const fileName of ['EVIL.EXE', 'setup.Exe']) {
    t.match(
      await upload(fileName),
      { status: 400, body: { error: { code: 'wm3053', message: 'Executable files are not accepted' } } },
      fileName,
    )
  }
  const uploaded = await upload('page.html')
  t.equal(uploaded.status, 200)
  const download = await fetch(`${stack.gatewayUrl}/file/download`, {
    method: 'POST',
    headers: { ...(await bearerFor(stack.users.employee.userId)), 'content-type': 'application/json' },
    body: JSON.stringify({ ...HR, ...fields, storageHandle: uploaded.body.data.storageHandle }),
  })
  t.equal(download.status, 200)
  t.equal(download.headers.get('x-content-type-options'), 'nosniff')
  t.match(download.headers.get('content-disposition'), /^attachment; filename="page\.html"/)
  await download.arrayBuffer()
})

t.test('tokens with a far-future exp, a lifetime past JWT_MAX_TOKEN_AGE, a future iat or no iat are 401', async (t) => {
  const stack = await productionStack(t)
  const { employee } = stack.users
  const status = (token: TokenOptions) => stack.send('getProcessStatus', '/process/none?appId=hr', employee, { token })
  const refused: Array<[string, TokenOptions]> = [
    ['exp ten years ahead', { expiresInSeconds: 10 * 365 * 86_400 }],
    ['exp 25 hours ahead', { expiresInSeconds: 25 * 3_600 }],
    ['iat an hour ahead', { issuedAtOffsetSeconds: 3_600 }],
    ['iat two minutes ahead', { issuedAtOffsetSeconds: 120 }],
    ['iat 25 hours ago', { issuedAtOffsetSeconds: -25 * 3_600 }],
    ['no iat', { issuedAtOffsetSeconds: null }],
  ]
  // A proxied route: the engine's verdict on the token (wm4011) comes back in the envelope.
  for (const [what, token] of refused) {
    t.match(await status(token), { status: 401, body: { status: 'permissionError', error: { code: 'wm4011' } } }, what)
  }
  // Accepted: a day's lifetime, and an iat a little ahead (the issuer's clock runs fast by less than JWT_CLOCK_SKEW_S).
  t.equal((await status({ expiresInSeconds: 23 * 3_600 })).status, 404, 'a 23 h token is let in (the instance is not found)')
  t.equal((await status({ issuedAtOffsetSeconds: 20 })).status, 404, 'iat 20 s ahead is within the clock skew')

  // The engine checks the token itself, with the same limits.
  const direct = await fetch(`${stack.engineUrl}/process/none?appId=hr`, {
    headers: { authorization: `Bearer ${await tokenFor(employee.userId, { expiresInSeconds: 10 * 365 * 86_400 })}` },
  })
  t.equal(direct.status, 401)
  t.match(await direct.json(), { code: 'wm4011' })
})

t.test('JWT_MAX_TOKEN_AGE and JWT_CLOCK_SKEW_S set the limits', async (t) => {
  const stack = await productionStack(t, jwtAuthConfig({ maxTokenAgeSeconds: 600, clockSkewSeconds: 0 }))
  const status = (token: TokenOptions) => stack.send('getProcessStatus', '/process/none?appId=hr', stack.users.employee, { token })
  t.equal((await status({ expiresInSeconds: 900 })).status, 401, 'a 15 min token past a 10 min limit')
  t.equal((await status({ expiresInSeconds: 300 })).status, 404, 'a 5 min token')
  t.equal((await status({ issuedAtOffsetSeconds: 30 })).status, 401, 'no skew allowed')
})
