/**
 * Tenants' code cannot stall the engine (docs/security.md#tenant-code-isolation). Flow functions run in the worker pool of
 * the engine's sandbox process (which may die of a tenant's allocation; the engine does not) and are
 * stopped at FLOW_TIMEOUT_MS however they spin; regex literals run with RE2 semantics (linear time);
 * model expressions on the engine's thread have a small budget; a function tried on the engine's
 * thread moves to the pool past its budget. Through the gateway, as a client would see it.
 */
import { performance } from 'node:perf_hooks'
import t from 'tap'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { deployHeavyTenant, HEAVY, OTHER } from '../../services/testing/heavy-tenant.js'
import { deployExample } from '../../services/testing/models.js'
import { createTestUser } from '../../services/testing/users.js'
import { workflowClient } from '../../services/testing/workflow.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const LIMIT_MS = 2000
/** Four workers: a tenant may hold two at once, and another tenant still finds a free one. */
const WORKERS = { threads: 4, memoryMb: 128 }

async function timed<T>(call: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now()
  const value = await call()
  return { value, ms: performance.now() - started }
}

/** A call under way, and whether it still is: what runs "meanwhile" is counted by this, not by a wall-clock window. */
function whileRunning<T>(call: Promise<T>): { settled: Promise<T>; running: () => boolean } {
  let running = true
  const settled = call.finally(() => (running = false))
  return { settled, running: () => running }
}

async function setUp(t: Tap) {
  const store = await openTestStore(t)
  const mallory = await deployHeavyTenant(store)
  await deployExample(store, 'hr-lib', OTHER)
  await deployExample(store, 'hr-constants', OTHER)
  await deployExample(store, 'leave-request', OTHER)
  const ann = await createTestUser(store, { ...OTHER, fullName: 'Ann Employee', swimlanes: ['employee'] })
  const engine = await startService(t, 'engine', { store, config: { flowTimeoutMs: LIMIT_MS, flowWorkers: WORKERS } })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  const execute = (functionId: string, tenant: typeof HEAVY | typeof OTHER, userId: string, inputParams: Record<string, unknown> = {}) =>
    client.call<{ status: string; data: { output?: Record<string, unknown> }; error?: { message: string } }>(
      'executeExternalFunction',
      'POST',
      `/external/function/${functionId}/execute`,
      {
        user: userId,
        body: { ...tenant, inputParams },
      },
    )
  // Workers boot with the pool's first run (seconds on a busy machine): wait for a tenant's share of them.
  const warmUntil = performance.now() + 60_000
  for (;;) {
    const round = await timed(() =>
      Promise.all(
        [1, 2].flatMap(() => [execute('vatOf', OTHER, ann.userId, { amount: 100 }), execute('poolWarmUp', HEAVY, mallory.userId)]),
      ),
    )
    if (round.ms < 300 || performance.now() > warmUntil) break
  }
  return { client, execute, mallory, ann }
}

t.test('runaway functions: linear-time regexes, stopped at the limit, other tenants unaffected', async (t) => {
  const { execute, mallory, ann, client } = await setUp(t)

  t.test('a catastrophic regex answers at once: regex literals run in linear time (RE2)', async (t) => {
    // A backtracking engine needs about 2^40 steps here: it would be stopped at the limit (500) instead of answering.
    const { value } = await timed(() => execute('catastrophicRegex', HEAVY, mallory.userId, { s: `${'a'.repeat(40)}!` }))
    t.equal(value.status, 200, JSON.stringify(value.body))
    t.same(value.body.data?.output, { matched: false }, 'the match is decided, within the limit')
  })

  t.test("runaway functions are stopped near FLOW_TIMEOUT_MS while another tenant's requests answer meanwhile", async (t) => {
    const heavy = whileRunning(
      Promise.all((['hugeRegex', 'tailRecursion'] as const).map((functionId) => timed(() => execute(functionId, HEAVY, mallory.userId)))),
    )
    let answeredMeanwhile = 0
    while (heavy.running()) {
      const vat = await timed(() => execute('vatOf', OTHER, ann.userId, { amount: 100 }))
      t.same(vat.value.body.data?.output, { vat: 20 }, "another tenant's function runs")
      const start = await timed(() =>
        client.call('startProcess', 'POST', '/process/start', {
          user: ann.userId,
          body: { ...OTHER, processId: 'leave-request', input: { days: 2 } },
        }),
      )
      t.equal(start.value.status, 200, 'another tenant starts a process')
      if (heavy.running()) answeredMeanwhile++
    }
    for (const { value, ms } of await heavy.settled) {
      t.equal(value.status, 500, 'the runaway run fails')
      // The limit's own error stops it (scripts/bench/isolation.mjs measures how far past the limit).
      t.match(
        value.body.error?.message,
        new RegExp(`ran longer than ${LIMIT_MS} ms`),
        `with the technical timeout error (${ms.toFixed(0)} ms)`,
      )
    }
    // On the engine's own thread, a runaway run would hold them until it ended: none would be answered while it runs.
    t.ok(
      answeredMeanwhile >= 2,
      `${answeredMeanwhile} times another tenant's function and process start were answered while the runaway runs were going`,
    )
  })

  t.test("a function spinning with plain paths leaves the engine's thread after its budget and is stopped at the limit", async (t) => {
    const items = Array.from({ length: 300 }, (_, index) => index)
    const heavy = whileRunning(timed(() => execute('nestedPaths', HEAVY, mallory.userId, { items })))
    let answeredMeanwhile = 0
    while (heavy.running()) {
      const vat = await execute('vatOf', OTHER, ann.userId, { amount: 100 })
      t.same(vat.body.data?.output, { vat: 20 }, "another tenant's function runs")
      if (heavy.running()) answeredMeanwhile++
    }
    const { value, ms } = await heavy.settled
    t.equal(value.status, 500, 'the runaway run fails')
    t.match(
      value.body.error?.message,
      new RegExp(`ran longer than ${LIMIT_MS} ms`),
      `with the technical timeout error of the whole run (${ms.toFixed(0)} ms)`,
    )
    // Had it stayed on the engine's thread, they would wait until it ended: none would be answered while it runs.
    t.ok(answeredMeanwhile >= 2, `${answeredMeanwhile} other requests answered while it ran`)
  })

  t.test('a run asking for more memory at once than a worker may hold fails, and the engine goes on', async (t) => {
    // In a worker of the engine's own process, V8 would abort this test's process here.
    const huge = await execute('hugeAllocation', HEAVY, mallory.userId)
    t.equal(huge.status, 500, 'the run fails')
    // Which comes first on a busy machine, the sandbox's end or the run's time limit, is a race: either is a technical failure.
    t.match(
      huge.body.error?.message,
      new RegExp(`sandbox process ended|ran longer than ${LIMIT_MS} ms`),
      'with a technical error: the process that held its worker ended, or the time limit came first',
    )
    const vat = await execute('vatOf', OTHER, ann.userId, { amount: 100 })
    t.same(vat.body.data?.output, { vat: 20 }, "another tenant's next function runs, in a new sandbox process")
    const again = await execute('poolWarmUp', HEAVY, mallory.userId)
    t.same(again.body.data?.output, { n: 3 }, "and so do the heavy tenant's")
  })
})

t.test("a model expression on the engine's thread has a small budget of its own", async (t) => {
  const store = await openTestStore(t)
  await deployExample(store, 'leave-request', {
    ...OTHER,
    edit: (body) => {
      body.businessKey = "( $f := function($n) { $n = 0 ? 'LR' : $f($n - 1) }; $f(1e12) )"
    },
  })
  const ann = await createTestUser(store, { ...OTHER, fullName: 'Ann Employee', swimlanes: ['employee'] })
  const engine = await startService(t, 'engine', { store, config: { flowTimeoutMs: 10_000, flowWorkers: { threads: 1, memoryMb: 64 } } })
  const client = workflowClient(t, engine.url)
  const answer = await client.call<{ message?: string }>('startProcess', 'POST', '/process/start', {
    user: ann.userId,
    body: { ...OTHER, processId: 'leave-request', input: { days: 2 } },
  })
  t.equal(answer.status, 500)
  // Its budget is counted in evaluated nodes, so what stops it is the budget whatever the machine's speed, not FLOW_TIMEOUT_MS (10 s).
  t.match(answer.body.message, /an expression evaluated more than \d+ nodes/, 'the runaway businessKey failed for its budget')
})

t.test('a regex RE2 cannot run (back-reference, look-ahead) is refused when the model is inserted', async (t) => {
  const { validateModel } = await import('../../model/validation.js')
  for (const pattern of ['/(a)\\1/', '/a(?=b)/']) {
    const model = {
      modelID: 'lib',
      type: 'functions',
      modelBody: { functions: { f: { steps: [{ set: { 'output.x': `$match('ab', ${pattern})` } }] } } },
    }
    t.match(validateModel(model), { message: /cannot run in linear time/ }, `${pattern} is refused`)
  }
})
