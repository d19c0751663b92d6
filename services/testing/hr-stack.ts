/**
 * Test support: the HR example app over one embedded store with its users and an integration
 * (system) user, one or more engines over that store, and a gateway in front of the first engine,
 * with a client whose answers are checked against the gateway's document. The suites of
 * tests/due-dates, tests/waits, tests/queries and tests/process-control build on it.
 */
import type { Test } from 'tap'
import type { Config } from '../../lib/config/config.js'
import type { Clock } from '../../plugins/clock/plugin.js'
import type { StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { openTestStore, type RunningService, startService } from './harness.js'
import { createTestUser } from './users.js'
import { createHrUsers, deployHrApp, HR, type HrUsers, type WorkflowClient, workflowClient } from './workflow.js'

export interface HrStackOptions {
  /** How many engines to start at once (1). */
  engines?: number
  /** Every engine's configuration. */
  engineConfig?: Partial<Config>
  /** The gateway's configuration (its `engineUrl` is the first engine's). */
  gatewayConfig?: Partial<Config>
  /** The engines' clock (services/testing/clock.ts); the system clock when not given. */
  clock?: Clock
  /** Changes the store before any service starts (a model's body, say). */
  prepare?: (store: Store) => Promise<void>
}

export interface HrStack {
  store: Store
  users: HrUsers & { system: StoredUser }
  engines: RunningService[]
  gateway: RunningService
  /** Through the gateway, as the user header names. */
  client: WorkflowClient
  /** Starts one more engine over the same store, clock and configuration. */
  addEngine(): Promise<RunningService>
}

export async function startHrStack(t: Test, options: HrStackOptions = {}): Promise<HrStack> {
  const store = await openTestStore(t)
  await deployHrApp(store)
  await options.prepare?.(store)
  const users = {
    ...(await createHrUsers(store)),
    system: await createTestUser(store, { ...HR, fullName: 'Ivy Integration', isSystemUser: true }),
  }
  const engines: RunningService[] = []
  const addEngine = async (): Promise<RunningService> => {
    const engine = await startService(t, 'engine', {
      store,
      config: options.engineConfig ?? {},
      ...(options.clock ? { clock: options.clock } : {}),
    })
    engines.push(engine)
    return engine
  }
  for (let index = 0; index < (options.engines ?? 1); index++) await addEngine()
  const gateway = await startService(t, 'gateway', { store, config: { ...options.gatewayConfig, engineUrl: engines[0]!.url } })
  return { store, users, engines, gateway, client: workflowClient(t, gateway.url, 'gateway'), addEngine }
}
