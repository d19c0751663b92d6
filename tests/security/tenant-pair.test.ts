/**
 * The tenant is the pair organizationId + appId: organizations `acme` and `other` both have an app
 * `hr`, and each tenant admin deploys the same model ids (constants, a function library, a data
 * collection, a form, a process, settings) with different contents. Through the gateway (jwt mode,
 * so the tenant admins are limited to their tenants) each tenant sees only its own, the other's
 * deploys neither replace nor evict anything of acme's, in the gateway's cache or the engine's, a
 * business key names an instance of the caller's organization only, and full names are unique per
 * tenant.
 */
import t, { type Test } from 'tap'
import { Collections, type StoredContext, type StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { type Tenant, tenantKey } from '../../store/tenant.js'
import { recordInvalidation } from '../../plugins/cache/invalidations.js'
import { openTestStore, type RunningService, startService } from '../../services/testing/harness.js'
import { insertModelRequest } from '../../services/testing/models.js'
import { bearerFor, jwtAuthConfig } from '../../services/testing/tokens.js'
import { createTestUser } from '../../services/testing/users.js'
import { waitUntil } from '../../services/testing/wait.js'

const ACME: Tenant = { organizationId: 'acme', appId: 'hr' }
const OTHER: Tenant = { organizationId: 'other', appId: 'hr' }

interface TenantUsers {
  admin: StoredUser
  employee: StoredUser
  manager: StoredUser
}

interface Answer {
  status: number
  // Parsed JSON of whichever shape the route answers; each test reads the fields it checks.
  body: { status?: string; data?: unknown; error?: { code?: string } } & Record<string, unknown>
  text: string
}

interface PairStack {
  store: Store
  gateway: RunningService
  engine: RunningService
  acme: TenantUsers
  other: TenantUsers
  send(as: StoredUser | null, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer>
}

/** What each tenant's variant of the example models says, so an answer shows whose model produced it. */
const VARIANTS: Record<'acme' | 'other', { vatRate: string; vatFactor: string; title: string; theme: string }> = {
  acme: { vatRate: '0.2', vatFactor: '1', title: 'Acme leave', theme: 'acme-light' },
  other: { vatRate: '0.5', vatFactor: '1000', title: 'Other leave', theme: 'other-dark' },
}

/** A change to an example model's body. */
type ModelEdit = (body: Record<string, unknown>) => void

/** The edits that make an example model the tenant's own variant. */
function variantOf(name: 'acme' | 'other', model: string): ModelEdit | undefined {
  const variant = VARIANTS[name]
  if (model === 'hr-constants') return (body) => void (body.vatRate = variant.vatRate)
  if (model === 'hr-lib')
    return (body) => {
      const functions = body.functions as Record<string, { steps: unknown[] }>
      functions.vatOf!.steps = [{ set: { 'output.vat': `$number(input.amount) * $number($constant('vatRate')) * ${variant.vatFactor}` } }]
    }
  if (model === 'leave-form') return (body) => void (body.title = variant.title)
  if (model === 'hr-settings') return (body) => void ((body.files as Record<string, Record<string, unknown>>).app!.theme = variant.theme)
  return undefined
}

const MODELS = ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-form', 'leave-request', 'hr-settings']

async function tenantUsers(store: Store, tenant: Tenant, name: string): Promise<TenantUsers> {
  return {
    admin: await createTestUser(store, { ...tenant, fullName: `${name} Admin`, roles: ['admin'] }),
    employee: await createTestUser(store, { ...tenant, fullName: `${name} Employee`, swimlanes: ['employee'] }),
    manager: await createTestUser(store, { ...tenant, fullName: `${name} Manager`, swimlanes: ['manager'] }),
  }
}

async function startPairStack(t: Test): Promise<PairStack> {
  const store = await openTestStore(t)
  const acme = await tenantUsers(store, ACME, 'Acme')
  const other = await tenantUsers(store, OTHER, 'Other')
  const config = jwtAuthConfig()
  const engine = await startService(t, 'engine', { store, config })
  const gateway = await startService(t, 'gateway', { store, config: { ...config, engineUrl: engine.url } })
  async function send(as: StoredUser | null, method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
    const all: Record<string, string> = { ...(as ? await bearerFor(as.userId) : {}), ...headers }
    if (body !== undefined) all['content-type'] = 'application/json'
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: all,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    let parsed: Answer['body'] = {}
    try {
      parsed = JSON.parse(text) as Answer['body']
    } catch {
      // A raw answer (the settings script): the test reads `text`.
    }
    return { status: response.status, body: parsed, text }
  }
  return { store, gateway, engine, acme, other, send }
}

/** The tenant admin deploys every model of the pair, each in its tenant's variant. */
async function deployAll(t: Test, stack: PairStack, name: 'acme' | 'other'): Promise<void> {
  const tenant = name === 'acme' ? ACME : OTHER
  for (const model of MODELS) {
    const edit = variantOf(name, model)
    // The admin's request names only the app: the organization is the admin's own.
    const request = insertModelRequest(model, { ...tenant, ...(edit ? { edit } : {}) })
    const answer = await stack.send(stack[name].admin, 'POST', '/model/insertModel', request)
    t.equal(answer.status, 200, `${name} deploys ${model}: ${answer.text}`)
  }
}

/** The part of a session a task's completion needs. */
interface FormSession {
  formContext: { task: { taskId: string } }
  context: { dataInstance: unknown }
}

/** A leave request of the tenant, run to its end: the employee submits, the manager approves (booking the leave). */
async function runLeaveRequest(t: Test, stack: PairStack, tenant: Tenant, users: TenantUsers, days: number): Promise<string> {
  const started = await stack.send(users.employee, 'POST', '/context', {
    ...tenant,
    processId: 'leave-request',
    input: { days, reason: 'Visit' },
  })
  t.equal(started.status, 200, `a leave request starts in ${tenantKey(tenant)}: ${started.text}`)
  const session = started.body.data as FormSession & {
    context: { processInstance: { processInstanceId: string; businessKey: string; organizationId: string } }
  }
  const { processInstanceId, businessKey } = session.context.processInstance
  t.equal(session.context.processInstance.organizationId, tenant.organizationId, 'the instance is of the starting tenant')
  const ids = { ...tenant, processId: 'leave-request', processInstanceId, businessKey }
  // Completes the task a session's form is about, with the session's data.
  const complete = (user: StoredUser, form: FormSession) =>
    stack.send(user, 'POST', '/action/complete', {
      ...ids,
      taskId: form.formContext.task.taskId,
      actionType: 'complete',
      dataInstance: form.context.dataInstance,
    })
  const submitted = await complete(users.employee, session)
  t.equal(submitted.status, 200, `submitted: ${submitted.text}`)
  const opened = await stack.send(users.manager, 'POST', '/context', { ...ids, skipToForm: true })
  const approved = await complete(users.manager, opened.body.data as FormSession)
  t.equal(approved.status, 200, `approved: ${approved.text}`)
  return processInstanceId
}

async function vatOf(stack: PairStack, user: StoredUser, tenant: Tenant): Promise<unknown> {
  const answer = await stack.send(user, 'POST', '/external/function/vatOf/execute', { ...tenant, inputParams: { amount: 100 } })
  return (answer.body.data as { output?: { vat?: unknown } } | undefined)?.output?.vat ?? answer.body.error?.code
}

async function constant(stack: PairStack, user: StoredUser, tenant: Tenant): Promise<unknown> {
  const answer = await stack.send(user, 'POST', '/getConstantValue', { ...tenant, constantId: 'hr:vatRate', processInstanceId: 'any' })
  return (answer.body.data as { result?: unknown } | undefined)?.result
}

async function modelTitle(stack: PairStack, user: StoredUser): Promise<unknown> {
  const answer = await stack.send(user, 'GET', '/model/getModel/leave-form')
  return answer.status === 200 ? (JSON.parse(answer.text) as { title?: unknown }).title : answer.status
}

async function bookings(stack: PairStack, user: StoredUser, tenant: Tenant): Promise<unknown[]> {
  const answer = await stack.send(user, 'POST', `/external/data/search/${encodeURIComponent('Leave bookings')}`, { ...tenant, filter: {} })
  return (answer.body.data as { items?: unknown[] } | undefined)?.items ?? []
}

/**
 * Waits until both services applied every invalidation recorded so far: each applies the records in
 * order, so once a marker recorded now is applied, so are the records before it.
 */
async function invalidationsApplied(stack: PairStack): Promise<boolean> {
  const caches = [stack.gateway.app.caches.cache('app'), stack.engine.app.caches.cache('app')]
  for (const cache of caches) cache.set('marker', {})
  await recordInvalidation(stack.store, { target: 'all', cacheType: 'app', id: 'marker' })
  const markers = await waitUntil(
    () => caches.map((cache) => cache.get('marker')),
    (found) => found.every((marker) => marker === undefined),
  )
  return markers.every((marker) => marker === undefined)
}

t.test(
  'two organizations with the same app id: each sees and runs only its own models, constants, functions, data and forms',
  async (t) => {
    const stack = await startPairStack(t)
    await deployAll(t, stack, 'acme')
    await deployAll(t, stack, 'other')
    const { acme, other } = stack

    t.equal(await modelTitle(stack, acme.employee), VARIANTS.acme.title, "getModel: acme's form for acme")
    t.equal(await modelTitle(stack, other.employee), VARIANTS.other.title, "getModel: other's form for other")
    t.equal(await constant(stack, acme.employee, ACME), VARIANTS.acme.vatRate, '`hr:vatRate` resolves in the caller organization (acme)')
    t.equal(
      await constant(stack, other.employee, OTHER),
      VARIANTS.other.vatRate,
      '`hr:vatRate` resolves in the caller organization (other)',
    )
    t.equal(await vatOf(stack, acme.employee, ACME), 20, "acme's vatOf runs with acme's definition and constant")
    t.equal(await vatOf(stack, other.employee, OTHER), 50_000, "other's vatOf runs with other's definition and constant")

    const acmeInstance = await runLeaveRequest(t, stack, ACME, acme, 2)
    await runLeaveRequest(t, stack, OTHER, other, 4)
    await runLeaveRequest(t, stack, OTHER, other, 5)
    const acmeBookings = await bookings(stack, acme.employee, ACME)
    t.equal(acmeBookings.length, 1, "acme's data collection holds acme's booking only")
    t.match(acmeBookings[0], { days: 2 })
    t.same((await bookings(stack, other.employee, OTHER)).map((booking) => (booking as { days: number }).days).sort(), [4, 5])

    const opened = await stack.send(acme.manager, 'POST', '/context', {
      ...ACME,
      processId: 'leave-request',
      processInstanceId: acmeInstance,
    })
    t.equal(opened.status, 200, "acme's instance opens for acme")
    const peek = await stack.send(other.manager, 'POST', '/context', {
      ...OTHER,
      processId: 'leave-request',
      processInstanceId: acmeInstance,
    })
    t.not(peek.status, 200, "acme's instance is not found by other")

    for (const [tenant, theme] of [
      [ACME, VARIANTS.acme.theme],
      [OTHER, VARIANTS.other.theme],
    ] as const) {
      const referer = `https://portal.example/?appId=hr&organizationId=${tenant.organizationId}`
      const script = await stack.send(null, 'GET', '/settings/app', undefined, { referer })
      t.equal(script.status, 200)
      t.match(script.text, theme, `the Referer's organizationId selects ${tenant.organizationId}'s settings`)
    }
    const ambiguous = await stack.send(null, 'GET', '/settings/app', undefined, { referer: 'https://portal.example/?appId=hr' })
    t.equal(ambiguous.status, 404, 'without organizationId an app two organizations have resolves to neither')
    t.match(ambiguous.body, { error: { code: 'fm3027' } })
  },
)

t.test("the other organization's tenant admin cannot replace, evict or break anything of acme's", async (t) => {
  const stack = await startPairStack(t)
  const { acme, other } = stack
  await deployAll(t, stack, 'acme')
  t.ok(await invalidationsApplied(stack), "both services applied the invalidations of acme's deploys")
  // Warm both services' caches for acme: the served form (gateway), the compiled process and the function library (engine).
  t.equal(await modelTitle(stack, acme.employee), VARIANTS.acme.title)
  t.equal(await vatOf(stack, acme.employee, ACME), 20)
  await runLeaveRequest(t, stack, ACME, acme, 1)
  const gatewayApp = stack.gateway.app.caches.cache('app')
  const engineApp = stack.engine.app.caches.cache('app')
  const acmeGateway = gatewayApp.get(tenantKey(ACME))
  const acmeEngine = engineApp.get(tenantKey(ACME))
  t.ok(acmeGateway && acmeEngine, "acme's models are cached in both services")

  // Other's admin deploys the same ids; naming acme's organization is refused outright.
  const intrusion = await stack.send(other.admin, 'POST', '/model/insertModel', insertModelRequest('hr-lib', ACME))
  t.equal(intrusion.status, 403, "other's admin cannot deploy into acme")
  await deployAll(t, stack, 'other')

  t.ok(await invalidationsApplied(stack), "both services applied the invalidations of other's deploys")
  t.equal(gatewayApp.get(tenantKey(ACME)), acmeGateway, "the gateway kept acme's cached models")
  t.equal(engineApp.get(tenantKey(ACME)), acmeEngine, "the engine kept acme's compiled models and functions")

  t.equal(await modelTitle(stack, acme.employee), VARIANTS.acme.title, "acme's form is still acme's")
  t.equal(await constant(stack, acme.employee, ACME), VARIANTS.acme.vatRate, "acme's constant is still acme's")
  t.equal(await vatOf(stack, acme.employee, ACME), 20, "acme's function still runs acme's definition")
  await runLeaveRequest(t, stack, ACME, acme, 3)
  t.same(
    (await bookings(stack, acme.employee, ACME)).map((booking) => (booking as { days: number }).days).sort(),
    [1, 3],
    "acme's process starts and books into acme's collection",
  )

  // Acme's own deploy evicts acme's entry and not other's.
  t.equal(await modelTitle(stack, other.employee), VARIANTS.other.title)
  const otherGateway = gatewayApp.get(tenantKey(OTHER))
  t.equal((await stack.send(acme.admin, 'POST', '/model/insertModel', insertModelRequest('leave-form', ACME))).status, 200)
  t.equal(gatewayApp.get(tenantKey(OTHER)), otherGateway, "acme's deploy leaves other's cached models")
  t.not(gatewayApp.get(tenantKey(ACME)), acmeGateway, "acme's deploy drops acme's cached models")
})

t.test('full-name uniqueness is per tenant: the same name in another organization is not probed', async (t) => {
  const stack = await startPairStack(t)
  const user = { fullName: 'Acme Employee', unit: { id: 'u', name: 'Unit' }, roles: ['user'] }
  const otherAnswer = await stack.send(stack.other.admin, 'POST', '/user/createUser', { ...user, ...OTHER })
  t.equal(otherAnswer.status, 200, "other may hold a name acme's user has")
  const acmeAnswer = await stack.send(stack.acme.admin, 'POST', '/user/createUser', { ...user, ...ACME })
  t.equal(acmeAnswer.status, 400, 'inside acme the name is taken')
  t.match(acmeAnswer.body, { error: { code: 'fm3004' } })
})

t.test(
  "a business key names the caller's organization's instance: the other organization's newer one with the same key does not hide it",
  async (t) => {
    const stack = await startPairStack(t)
    const { acme, other } = stack
    await deployAll(t, stack, 'acme')
    await deployAll(t, stack, 'other')
    const start = async (tenant: Tenant, users: TenantUsers) => {
      const started = await stack.send(users.employee, 'POST', '/context', { ...tenant, processId: 'leave-request', input: { days: 2 } })
      t.equal(started.status, 200, `a leave request starts in ${tenantKey(tenant)}: ${started.text}`)
      return (started.body.data as { context: { processInstance: { processInstanceId: string; businessKey: string } } }).context
        .processInstance
    }
    const ours = await start(ACME, acme)
    const theirs = await start(OTHER, other)
    // The other organization's instance takes acme's business key and was updated last: the one a lookup without the organization finds.
    const contexts = stack.store.collection<StoredContext>(Collections.contexts)
    const later = new Date(Date.now() + 3_600_000)
    await contexts.updateOne(
      { _id: theirs.processInstanceId },
      { $set: { businessKey: ours.businessKey, 'processInstance.businessKey': ours.businessKey, lastUpdate: later } },
    )
    const theirsBefore = await contexts.findOne({ _id: theirs.processInstanceId })
    const byKey = { ...ACME, processId: 'leave-request', businessKey: ours.businessKey }

    const resent = await stack.send(acme.admin, 'POST', '/notify/send', { ...byKey, eventType: 'Finished' })
    t.equal(resent.status, 200, `acme's notification is resent by business key: ${resent.text}`)
    const moved = await stack.send(acme.admin, 'POST', '/external/process/changeStep', { ...byKey, stepId: 'approve' })
    t.equal(moved.status, 200, `acme's instance is moved by business key: ${moved.text}`)
    const oursAfter = await contexts.findOne({ _id: ours.processInstanceId })
    t.match(oursAfter?.processInstance.tasks.at(-1), { stepId: 'approve', status: 'open' }, "acme's instance is the one moved")
    t.same(await contexts.findOne({ _id: theirs.processInstanceId }), theirsBefore, "the other organization's instance is untouched")
  },
)
