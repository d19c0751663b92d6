#!/usr/bin/env node
// @ts-check
/**
 * External tasks (docs/reference/external-tasks.md), on the built all-in-one over the embedded
 * store, through the gateway, with a system user as the worker and a process whose only step is an
 * external task:
 *
 * 1. Round trip with one worker: BENCH_EXTERNAL_ROUNDS times, an instance is started (not timed),
 *    then `fetchAndLock` + `complete` of its task are timed together; median and p99.
 * 2. Throughput with BENCH_EXTERNAL_WORKERS (8) workers: BENCH_EXTERNAL_TASKS tasks are created
 *    first, then the workers fetch (one task each call) and complete until none is left; tasks/s
 *    from the first fetch to the last completion.
 *
 * Targets: every task is completed exactly once (no task handed to two workers, none lost). The
 * figures are information (they depend on the machine and its neighbours).
 *
 * Environment: BENCH_EXTERNAL_ROUNDS (300), BENCH_EXTERNAL_TASKS (1000), BENCH_EXTERNAL_WORKERS (8).
 */
import { Pool } from 'undici'
import { importBuilt } from './support/dist.mjs'
import { timedPost } from './support/http.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { median, percentile } from './support/stats.mjs'
import { withStore, withTempDir } from './support/store.mjs'

const { createTestUser } = await importBuilt('services/testing/users.js')
const { deployProcess } = await importBuilt('services/engine/external-tasks/test-support.js')

const ROUNDS = Number(process.env.BENCH_EXTERNAL_ROUNDS ?? 300)
const TASKS = Number(process.env.BENCH_EXTERNAL_TASKS ?? 1000)
const WORKERS = Number(process.env.BENCH_EXTERNAL_WORKERS ?? 8)
const TENANT = { appId: 'hr', organizationId: 'acme' }
const MODEL = {
  processId: 'export',
  start: 'export',
  steps: {
    export: { type: 'externalTask', topic: 'export', input: "{ 'n': data.n }", as: 'data.result', next: 'done' },
    done: { type: 'end' },
  },
}

/** @param {Pool} pool @param {string} path @param {string} user @param {object} body */
async function post(pool, path, user, body) {
  const answer = await timedPost(pool, path, user, { ...TENANT, ...body })
  if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.text}`)
  return { ...answer, data: JSON.parse(answer.text).data }
}

/** @param {Pool} pool @param {string} worker @param {string} workerId */
async function fetchOne(pool, worker, workerId) {
  const answer = await post(pool, '/external/worker/fetchAndLock', worker, {
    workerId,
    topics: [{ topic: 'export', lockDuration: 600_000 }],
    maxTasks: 1,
  })
  return { ms: answer.ms, task: /** @type {{ externalTaskId: string } | undefined} */ (answer.data[0]) }
}

await runBench(async () =>
  withTempDir('bench-external-tasks-', async (dataDir) => {
    const users = await withStore(dataDir, async (store) => {
      await deployProcess(store, TENANT, MODEL)
      return {
        employee: (await createTestUser(store, { ...TENANT, fullName: 'Bench Employee' })).userId,
        worker: (await createTestUser(store, { ...TENANT, fullName: 'Bench Worker', isSystemUser: true })).userId,
      }
    })
    const service = await startAllInOne({ dataDir })
    const pool = new Pool(service.gateway, { connections: WORKERS + 2 })
    try {
      const start = (/** @type {number} */ n) => post(pool, '/process/start', users.employee, { processId: 'export', input: { n } })
      // 1. one worker's round trip
      /** @type {number[]} */
      const roundTrips = []
      let completedOnce = 0
      for (let round = 0; round < ROUNDS; round++) {
        await start(round)
        const fetched = await fetchOne(pool, users.worker, 'solo')
        if (!fetched.task) throw new Error('no task to fetch')
        const done = await post(pool, `/external/worker/${fetched.task.externalTaskId}/complete`, users.worker, {
          workerId: 'solo',
          output: { ok: true },
        })
        roundTrips.push(fetched.ms + done.ms)
        completedOnce++
      }
      roundTrips.sort((a, b) => a - b)
      process.stdout.write(
        `round trip (fetchAndLock + complete, 1 worker, ${ROUNDS} tasks): p50 ${median(roundTrips).toFixed(1)} ms, ` +
          `p99 ${percentile(roundTrips, 99).toFixed(1)} ms\n`,
      )
      // 2. WORKERS workers over TASKS tasks
      for (let created = 0; created < TASKS;) {
        const batch = Math.min(20, TASKS - created)
        await Promise.all(Array.from({ length: batch }, (_, index) => start(created + index)))
        created += batch
      }
      const seen = new Set()
      let duplicates = 0
      const began = performance.now()
      await Promise.all(
        Array.from({ length: WORKERS }, async (_, index) => {
          const workerId = `worker-${index}`
          for (;;) {
            const { task } = await fetchOne(pool, users.worker, workerId)
            if (!task) return
            if (seen.has(task.externalTaskId)) duplicates++
            seen.add(task.externalTaskId)
            await post(pool, `/external/worker/${task.externalTaskId}/complete`, users.worker, { workerId, output: { by: workerId } })
          }
        }),
      )
      const seconds = (performance.now() - began) / 1000
      process.stdout.write(
        `throughput (${WORKERS} workers, ${TASKS} tasks): ${(seen.size / seconds).toFixed(0)} tasks/s (${seconds.toFixed(2)} s)\n`,
      )
      return reportTargets([
        [`every round-trip task completed once (${completedOnce}/${ROUNDS})`, completedOnce === ROUNDS],
        [
          `every task completed once by ${WORKERS} workers (${seen.size}/${TASKS}, ${duplicates} handed twice)`,
          seen.size === TASKS && duplicates === 0,
        ],
      ])
    } finally {
      await pool.close()
      await service.stop()
    }
  }),
)
