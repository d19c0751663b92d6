/**
 * The flow worker pool is shared fairly: a tenant holds at most its share of the workers, and a
 * freed worker goes round robin to the tenants with runs waiting, so another tenant's run starts
 * before the queued runs of a tenant flooding the pool. Through the gateway; the order of the
 * answers shows it, not their times.
 */
import t from 'tap'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { deployHeavyTenant, HEAVY, OTHER } from '../../services/testing/heavy-tenant.js'
import { deployExample } from '../../services/testing/models.js'
import { createTestUser } from '../../services/testing/users.js'
import { workflowClient } from '../../services/testing/workflow.js'

const LIMIT_MS = 2000

t.test("another tenant's pool run is answered before the queued runs of a tenant flooding the pool", async (t) => {
  const store = await openTestStore(t)
  const mallory = await deployHeavyTenant(store)
  await deployExample(store, 'hr-lib', OTHER)
  await deployExample(store, 'hr-constants', OTHER)
  const ann = await createTestUser(store, { ...OTHER, fullName: 'Ann Employee', swimlanes: [] })
  // Two workers, so a tenant's share is one; every function runs in the pool.
  const engine = await startService(t, 'engine', {
    store,
    config: { flowTimeoutMs: LIMIT_MS, flowInlineBudgetMs: 0, flowWorkers: { threads: 2, memoryMb: 128 } },
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  const execute = (functionId: string, tenant: typeof HEAVY | typeof OTHER, userId: string, inputParams: Record<string, unknown> = {}) =>
    client.call<{ data?: { output?: Record<string, unknown> }; error?: { message: string } }>(
      'executeExternalFunction',
      'POST',
      `/external/function/${functionId}/execute`,
      { user: userId, body: { ...tenant, inputParams } },
    )
  // The sandbox and its workers start with the first run.
  t.same((await execute('poolWarmUp', HEAVY, mallory.userId)).body.data?.output, { n: 3 })

  const answered: string[] = []
  const flood = [1, 2, 3].map((run) =>
    execute('busyLoop', HEAVY, mallory.userId).then((answer) => {
      answered.push(`flood-${run}`)
      return answer
    }),
  )
  const other = execute('vatOf', OTHER, ann.userId, { amount: 100 }).then((answer) => {
    answered.push('other')
    return answer
  })
  t.same((await other).body.data?.output, { vat: 20 }, "the other tenant's run is served")
  for (const answer of await Promise.all(flood))
    t.match(answer.body.error?.message, /ran longer than/, 'each flooding run ends at its limit')
  // A pool without shares would have run two flooding runs at once and the other run only after they ended.
  const floodAnswers = answered.flatMap((label, position) => (label.startsWith('flood') ? [position] : []))
  t.ok(
    answered.indexOf('other') < (floodAnswers[1] ?? -1),
    `the other tenant was answered before the flood's queued runs (answers in order: ${answered.join(', ')})`,
  )
})
