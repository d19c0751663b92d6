/**
 * A deploy is visible to the next request: once insertModel has answered, every gateway and engine
 * uses what it deployed, with no wait for the cache poll (CACHE_POLL_MS is set to an hour here, so
 * only the check on read can make it so). docs/production.md "Consistency" describes the mechanism.
 */
import t from 'tap'
import { startAllInOne } from '../../services/testing/all-in-one.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { createHrUsers, deployHrApp } from '../../services/testing/workflow.js'
import { HR } from '../../services/testing/tenant.js'
import { deployAndUseAtOnce, deployQuickStart, type DeployStack } from './support.js'

const ROUNDS = 50
const NO_POLL = 3_600_000

async function missesOverRounds(stack: DeployStack): Promise<string[]> {
  const misses: string[] = []
  // Round 0 fills every cache (functions, compiled process, served models) with what is replaced next.
  for (let round = 0; round <= ROUNDS; round++) misses.push(...(await deployAndUseAtOnce(stack, round)))
  return misses
}

t.test(
  'in the all-in-one, a function, process version, constants and data collection deployed are used by the next request, 50 times',
  async (t) => {
    const { gatewayUrl } = await startAllInOne(t, { CACHE_POLL_MS: String(NO_POLL) })
    const created = await fetch(`${gatewayUrl}/user/createUser`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        ...HR,
        fullName: 'Eve Employee',
        unit: { id: 'hr', name: 'Human resources' },
        roles: ['user'],
        swimlanes: ['employee'],
      }),
    })
    const userId = ((await created.json()) as { data: { userId: string } }).data.userId
    const stack: DeployStack = { deployUrl: gatewayUrl, gatewayUrls: [gatewayUrl], userId }
    await deployQuickStart(stack)
    t.same(await missesOverRounds(stack), [], 'no request missed the deploy before it')
  },
)

t.test('a deploy through one gateway is used by the next request of another gateway and its own engine, 50 times', async (t) => {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const { employee } = await createHrUsers(store)
  const config = { cachePollMs: NO_POLL }
  const engineA = await startService(t, 'engine', { store, config })
  const engineB = await startService(t, 'engine', { store, config })
  const gatewayA = await startService(t, 'gateway', { store, config: { ...config, engineUrl: engineA.url } })
  const gatewayB = await startService(t, 'gateway', { store, config: { ...config, engineUrl: engineB.url } })
  const stack: DeployStack = { deployUrl: gatewayA.url, gatewayUrls: [gatewayA.url, gatewayB.url], userId: employee.userId }
  await deployQuickStart(stack)
  t.same(await missesOverRounds(stack), [], 'neither engine nor either gateway missed the deploy before it')
})
