/**
 * Budgets of tenants' input on the engine's thread (docs/security.md "Budgets"): a tenant's JSON
 * Schema checks a caller's input in linear time, and a large input in the worker pool; data filters
 * are bounded in size and a search in the documents it examines; one request's functions make a
 * bounded number of outbound calls. Through the gateway, as a client sees it.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { Collections } from '../../store/collections.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { dataCollectionName, deployExample } from '../../services/testing/models.js'
import { createTestUser } from '../../services/testing/users.js'
import { HR, workflowClient } from '../../services/testing/workflow.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** Another tenant, whose requests are served whatever the first one sends. */
const OTHER = { appId: 'sales', organizationId: 'globex' } as const

const LIMITS = { maxConditions: 20, maxRegexes: 2, maxFilterBytes: 2_000, maxSearchTests: 100 }
const MAX_CALLS = 5

/** Items that are all different objects: what `uniqueItems` compared pair by pair before. */
function distinctItems(count: number): Array<{ id: number; name: string }> {
  return Array.from({ length: count }, (_, id) => ({ id, name: `item ${id}` }))
}

const UNIQUE_ITEMS = { type: 'array', uniqueItems: true, items: { type: 'object' } }

async function partnerServer(t: Tap): Promise<{ url: string; calls: () => number }> {
  let calls = 0
  const server = createServer((_request, response) => {
    calls++
    response.writeHead(200, { 'content-type': 'application/json' })
    response.end('{"ok":true}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/ping`, calls: () => calls }
}

async function setUp(t: Tap) {
  const partner = await partnerServer(t)
  const store = await openTestStore(t)
  await deployExample(store, 'hr-constants', HR)
  await deployExample(store, 'leave-bookings', HR)
  await deployExample(store, 'hr-lib', {
    ...HR,
    edit: (body) =>
      Object.assign(body.functions as object, {
        tally: { input: { type: 'object', properties: { items: UNIQUE_ITEMS } }, steps: [{ set: { 'output.n': '$count(input.items)' } }] },
        findBookings: { steps: [{ data: 'find', collection: 'Leave bookings', filter: 'input.filter', as: 'output.found' }] },
      }),
  })
  await deployExample(store, 'leave-request', {
    ...HR,
    edit: (body) => {
      ;(body.input as { properties: Record<string, unknown> }).properties.items = UNIQUE_ITEMS
    },
  })
  // A loop of steps calling out: function, then a switch back to it until data.n reaches 100.
  await deployExample(store, 'leave-request', {
    ...HR,
    edit: (body) => {
      body.processId = 'ping-loop'
      for (const key of ['input', 'businessKey', 'inform']) delete body[key]
      body.start = 'call'
      body.steps = {
        call: { type: 'function', function: 'ping', next: 'again', onError: 'fail' },
        again: { type: 'switch', cases: [{ when: 'data.n < 100', next: 'call' }], default: 'done' },
        done: { type: 'end', status: 'completed' },
      }
      body.functions = {
        ping: { steps: [{ http: { method: 'GET', url: 'data.url' } }, { set: { 'data.n': 'data.n + 1' } }] },
      }
    },
  })
  await deployExample(store, 'hr-lib', OTHER)
  await deployExample(store, 'hr-constants', OTHER)
  const ann = await createTestUser(store, { ...HR, fullName: 'Ann Employee', swimlanes: ['employee'] })
  const otto = await createTestUser(store, { ...OTHER, fullName: 'Otto Other', swimlanes: [] })
  const bookings = store.collection(dataCollectionName(HR, 'leave-bookings'))
  for (let index = 1; index <= 30; index++) await bookings.insertOne({ businessKey: `LR-${index}`, days: index })
  const engine = await startService(t, 'engine', {
    store,
    config: {
      dataLimits: LIMITS,
      flowHttpMaxCallsPerRequest: MAX_CALLS,
      flowHttp: { allowedHosts: [new URL(partner.url).host], forwardHeaders: [] },
    },
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  type Answer = {
    status: string
    data?: { output?: Record<string, unknown> }
    error?: { code: string; message: string; parameters?: Record<string, string> }
  }
  const execute = (functionId: string, inputParams: Record<string, unknown>, userId = ann.userId, tenant: object = HR) =>
    client.call<Answer>('executeExternalFunction', 'POST', `/external/function/${functionId}/execute`, {
      user: userId,
      body: { ...tenant, inputParams },
    })
  const start = (processId: string, input: Record<string, unknown>) =>
    client.call<Answer>('startProcess', 'POST', '/process/start', { user: ann.userId, body: { ...HR, processId, input } })
  const search = (filter: Record<string, unknown>) =>
    client.call<Answer & { data?: { total?: number } }>('searchDataCollection', 'POST', '/external/data/search/Leave%20bookings', {
      user: ann.userId,
      body: { ...HR, filter },
    })
  const otherServed = async (tap: Tap) => {
    const vat = await execute('vatOf', { amount: 100 }, otto.userId, OTHER)
    tap.same(vat.body.data?.output, { vat: 20 }, "another tenant's request is served")
  }
  return { store, partner, execute, start, search, otherServed }
}

t.test('tenant input against tenant budgets', async (t) => {
  const { store, partner, execute, start, search, otherServed } = await setUp(t)

  t.test('a uniqueItems schema checks 10,000 distinct objects of a start and finds a duplicate, whatever its key order', async (t) => {
    const items = distinctItems(10_000)
    const started = await start('leave-request', { days: 2, items })
    t.equal(started.status, 200, JSON.stringify(started.body.error))
    const duplicate = await start('leave-request', { days: 2, items: [...items, { name: 'item 5', id: 5 }] })
    t.equal(duplicate.status, 400)
    t.equal(duplicate.body.error?.code, 'wm3004')
    t.match(duplicate.body.error?.message, /duplicate items \(items ## 5 and 10000 are identical\)/)
    await otherServed(t)
  })

  t.test("a function's uniqueItems input of 10,000 objects is checked within the run's limit", async (t) => {
    const items = distinctItems(10_000)
    const tallied = await execute('tally', { items })
    t.equal(tallied.status, 200, JSON.stringify(tallied.body.error))
    t.same(tallied.body.data?.output, { n: 10_000 })
    const duplicate = await execute('tally', { items: [...items, items[42]] })
    t.equal(duplicate.status, 400)
    t.equal(duplicate.body.error?.code, 'wm3056')
    t.match(duplicate.body.error?.message, /duplicate items \(items ## 42 and 10000/)
    await otherServed(t)
  })

  t.test('a data search filter over its bounds is refused with 400 wm3102 naming the bound', async (t) => {
    const cases = [
      [{ $or: Array.from({ length: 21 }, (_, days) => ({ days })) }, 'DATA_FILTER_MAX_CONDITIONS'],
      [{ $or: ['^LR-1', '^LR-2', '^LR-3'].map(($regex) => ({ businessKey: { $regex } })) }, 'DATA_FILTER_MAX_REGEXES'],
      [{ businessKey: 'x'.repeat(2_001) }, 'DATA_FILTER_MAX_BYTES'],
    ] as const
    for (const [filter, limit] of cases) {
      const answer = await search(filter)
      t.equal(answer.status, 400, limit)
      t.match(answer.body.error, { code: 'wm3102', parameters: { limit } }, `the answer names ${limit}`)
      t.match(answer.body.error?.message, limit)
    }
    await otherServed(t)
  })

  t.test('a search that would examine more documents than its budget answers 422 wm3103; an indexed one is served', async (t) => {
    // Five conditions: 100 tests examine at most 20 of the 30 documents, and `days` has no index.
    const scan = await search({ $or: [1, 2, 3, 4, 5].map((days) => ({ days })) })
    t.equal(scan.status, 422)
    t.match(scan.body.error, { code: 'wm3103', parameters: { limit: 'DATA_SEARCH_MAX_TESTS' } })
    const indexed = await search({ businessKey: { $in: ['LR-1', 'LR-2', 'LR-3', 'LR-4', 'LR-5'] } })
    t.equal(indexed.status, 200, 'the unique index on businessKey narrows the documents examined to five')
    t.equal(indexed.body.data?.total, 5)
    await otherServed(t)
  })

  t.test("a flow function's data node obeys the same bounds, with the same codes", async (t) => {
    const tooLarge = await execute('findBookings', { filter: { $or: Array.from({ length: 21 }, (_, days) => ({ days })) } })
    t.equal(tooLarge.status, 400)
    t.match(tooLarge.body.error, { code: 'wm3102', parameters: { limit: 'DATA_FILTER_MAX_CONDITIONS' } })
    const overBudget = await execute('findBookings', { filter: { $or: [1, 2, 3, 4, 5].map((days) => ({ days })) } })
    t.equal(overBudget.status, 422)
    t.match(overBudget.body.error, { code: 'wm3103', parameters: { limit: 'DATA_SEARCH_MAX_TESTS' } })
    const found = await execute('findBookings', { filter: { businessKey: 'LR-7' } })
    t.match(found.body.data?.output, { found: [{ businessKey: 'LR-7', days: 7 }] })
  })

  t.test('a loop of steps calling out stops at FLOW_HTTP_MAX_CALLS_PER_REQUEST, and nothing is stored', async (t) => {
    const before = partner.calls()
    const looped = await start('ping-loop', { url: partner.url, n: 0 })
    t.equal(looped.status, 500)
    t.match(looped.body.error, { code: 'wm3057', parameters: { limit: 'FLOW_HTTP_MAX_CALLS_PER_REQUEST' } })
    t.match(looped.body.error?.message, /FLOW_HTTP_MAX_CALLS_PER_REQUEST/)
    t.equal(partner.calls() - before, MAX_CALLS, `${MAX_CALLS} calls went out, and no more`)
    const stored = await store.collection(Collections.contexts).countDocuments({ 'processInstance.processId': 'ping-loop' })
    t.equal(stored, 0, 'no instance was stored, although the step says onError: fail')
  })
})
