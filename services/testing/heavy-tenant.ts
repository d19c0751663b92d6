/**
 * Test support for tenant code isolation (docs/security.md#tenant-code-isolation), shared by tests/security/isolation.test.ts
 * and scripts/bench/isolation.mjs: a tenant whose flow functions are worst cases for a JSONata engine on
 * one thread, and another tenant with ordinary requests.
 */
import type { StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { deployExample } from './models.js'
import { HR } from './tenant.js'
import { createTestUser } from './users.js'

/** The tenant whose functions run away. */
export const HEAVY = { appId: 'heavy', organizationId: 'mallory' } as const
/** Another tenant, whose ordinary requests must not wait for the heavy one's. */
export const OTHER = HR

/** The heavy tenant's functions: each but `poolWarmUp` runs until FLOW_TIMEOUT_MS stops it, unless said otherwise. */
export const HEAVY_FUNCTIONS = {
  // Backtracking engines take exponential time here; RE2 is linear, so a 2 MB subject matched over and over keeps it busy
  // past the limit (one 20 MB subject would take a 160 MB array at once: past a worker's heap, see hugeAllocation).
  hugeRegex: { steps: [{ set: { 'output.n': "$count([1..100000].$match($pad('', 2000000, 'a') & '!', /^(a+)+$/))" } }] },
  // One allocation larger than any worker's heap ceiling: V8 ends the process that holds the worker, not just the worker.
  hugeAllocation: { steps: [{ set: { 'output.n': "$length($pad('', 300000000, 'a'))" } }] },
  // Tail calls: JSONata's trampoline never grows the stack, so only the time limit ends it.
  tailRecursion: { steps: [{ set: { 'output.n': '( $f := function($n) { $n = 0 ? 0 : $f($n - 1) }; $f(1e12) )' } }] },
  busyLoop: { steps: [{ set: { 'output.n': '$sum([1..1000000].($sum([1..1000000])))' } }] },
  // Catastrophic for a backtracking engine on a short `input.s`; with RE2 it answers at once.
  catastrophicRegex: { steps: [{ set: { 'output.matched': '$exists($match(input.s, /^(a+)+$/))' } }] },
  // No costly construct: it starts on the engine's thread and must leave it once past its budget.
  nestedPaths: { steps: [{ set: { 'output.n': '$count($$.input.items.($$.input.items.($$.input.items.($$.input.items))))' } }] },
  // A range sends it to the pool at once: the warm-up's way of starting the pool's workers.
  poolWarmUp: { steps: [{ set: { 'output.n': '$count([1..3])' } }] },
} as const

/** Deploys the heavy tenant's function library (HEAVY_FUNCTIONS); answers Mallory, its user who runs them. */
export async function deployHeavyTenant(store: Store): Promise<StoredUser> {
  await deployExample(store, 'hr-lib', { ...HEAVY, edit: (body) => Object.assign(body.functions as object, HEAVY_FUNCTIONS) })
  return createTestUser(store, { ...HEAVY, fullName: 'Mallory', swimlanes: [] })
}
