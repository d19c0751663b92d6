#!/usr/bin/env node
// @ts-check
/**
 * Tenant code isolation (docs/security.md#tenant-code-isolation), through the gateway of the built all-in-one on the
 * embedded store: one tenant keeps 4 worst-case flow functions running at once (a catastrophic regex
 * over a large input, tail recursion, a busy loop), each started again as soon as it was stopped,
 * while another tenant issues ordinary requests (a process start and a standalone function run) one
 * after the other. Prints p50/p99 of the ordinary requests and how far past FLOW_TIMEOUT_MS the
 * heavy runs answered.
 *
 * Targets: p99 of the ordinary requests under 100 ms; every heavy run stopped within 10% of its
 * limit (the first run of each worker includes its start-up, so the overrun is reported as p50 and
 * max). Exit code 1 when a target is missed or a request fails.
 *
 * Environment: BENCH_DURATION_S (default 20), BENCH_FLOW_TIMEOUT_MS (2000), BENCH_FLOW_WORKERS (8).
 */
import { Pool } from 'undici'
import { importBuilt } from './support/dist.mjs'
import { ordinaryRequests } from './support/ordinary-requests.mjs'
import { timedPost as post } from './support/http.mjs'
import { runBench, reportTargets } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { percentile } from './support/stats.mjs'
import { deployExamples, withStore, withTempDir } from './support/store.mjs'

const { deployHeavyTenant, HEAVY, OTHER } = await importBuilt('services/testing/heavy-tenant.js')
const { createTestUser } = await importBuilt('services/testing/users.js')

const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 20) * 1000
const LIMIT_MS = Number(process.env.BENCH_FLOW_TIMEOUT_MS ?? 2000)
const WORKERS = Number(process.env.BENCH_FLOW_WORKERS ?? 8)
const TARGET = { p99Ms: 100, overrun: 0.1 }
const HEAVY_RUNS = ['hugeRegex', 'tailRecursion', 'busyLoop', 'hugeRegex']

/** @param {string} dataDir */
async function seed(dataDir) {
  return withStore(dataDir, async (store) => {
    const mallory = await deployHeavyTenant(store)
    await deployExamples(store, ['leave-request', 'hr-constants', 'hr-lib'], OTHER)
    const ann = await createTestUser(store, { ...OTHER, fullName: 'Ann Employee', swimlanes: ['employee'] })
    return { mallory: mallory.userId, ann: ann.userId }
  })
}

await runBench(() =>
  withTempDir('bench-isolation-', async (dataDir) => {
    const users = await seed(dataDir)
    const service = await startAllInOne({
      dataDir,
      env: { LOG_LEVEL: 'fatal', FLOW_TIMEOUT_MS: String(LIMIT_MS), FLOW_WORKERS: String(WORKERS) },
    })
    const pool = new Pool(service.gateway, { connections: 16 })
    try {
      // Warm-up: the routes, and the worker pool (which starts with its first run; ordinary
      // functions run on the engine's thread and never reach it), before anything is measured.
      for (let i = 0; i < 20; i++) await ordinaryRequests(pool, users.ann, OTHER)
      await Promise.all(
        Array.from({ length: WORKERS }, () =>
          post(pool, '/external/function/poolWarmUp/execute', users.mallory, { ...HEAVY, inputParams: {} }),
        ),
      )

      process.stdout.write(
        `isolation benchmark: ${HEAVY_RUNS.length} worst-case runs at a time (FLOW_TIMEOUT_MS ${LIMIT_MS}, ${WORKERS} workers), ` +
          `${DURATION_MS / 1000} s\n`,
      )
      const until = performance.now() + DURATION_MS
      /** @type {number[]} */
      const overruns = []
      let heavyUnexpected = 0
      const heavyLoops = HEAVY_RUNS.map(async (functionId) => {
        while (performance.now() < until) {
          const answer = await post(pool, `/external/function/${functionId}/execute`, users.mallory, { ...HEAVY, inputParams: {} })
          if (answer.status !== 500 || !answer.text.includes('ran longer than')) heavyUnexpected++
          overruns.push(answer.ms - LIMIT_MS)
        }
      })
      /** @type {number[]} */
      const latencies = []
      while (performance.now() < until) latencies.push(...(await ordinaryRequests(pool, users.ann, OTHER)))
      await Promise.all(heavyLoops)

      latencies.sort((a, b) => a - b)
      overruns.sort((a, b) => a - b)
      const p99 = percentile(latencies, 99)
      const overrunP50 = percentile(overruns, 50)
      process.stdout.write(
        `  ordinary requests of another tenant: ${latencies.length}, p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ` +
          `${p99.toFixed(2)} ms, max ${(latencies.at(-1) ?? NaN).toFixed(2)} ms\n`,
      )
      process.stdout.write(
        `  heavy runs stopped: ${overruns.length}, answered past the limit by p50 ${overrunP50.toFixed(0)} ms ` +
          `(${((overrunP50 / LIMIT_MS) * 100).toFixed(1)}%), max ${(overruns.at(-1) ?? NaN).toFixed(0)} ms\n`,
      )
      return reportTargets([
        [`p99 of other requests < ${TARGET.p99Ms} ms`, p99 < TARGET.p99Ms],
        [`heavy runs stopped within ${TARGET.overrun * 100}% of the limit (p50)`, overrunP50 < LIMIT_MS * TARGET.overrun],
        ['every heavy run failed with the timeout error', heavyUnexpected === 0],
      ])
    } finally {
      await pool.close()
      await service.stop()
    }
  }),
)
