#!/usr/bin/env node
// @ts-check
/**
 * The reporting queries with 100,000 stored instances (docs/reference/queries.md): an engine of the built code on the
 * embedded store, seeded with instances of two processes of one app (leave requests: 1 in 20
 * running, the rest completed, last updates spread over a year; purchases) plus activity records,
 * then each query is sent repeatedly over HTTP, as an admin (whole tenant) and as a user who sees
 * only their own instances.
 *
 * Target: every query's p95 under 250 ms. Exit code 1 when one misses it or a request fails.
 * Environment: BENCH_SEEDED_INSTANCES (default 100000), BENCH_REPEAT (20).
 */
import { importBuilt } from './support/dist.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { percentile } from './support/stats.mjs'
import { withStore, withTempDir } from './support/store.mjs'

const { buildService } = /** @type {typeof import('../../services/build.js')} */ (await importBuilt('services/build.js'))
const { testConfig, silentLogger } = /** @type {typeof import('../../services/testing/harness.js')} */ (
  await importBuilt('services/testing/harness.js')
)
const { deployHrApp, HR } = /** @type {typeof import('../../services/testing/workflow.js')} */ (
  await importBuilt('services/testing/workflow.js')
)
const { createTestUser } = /** @type {typeof import('../../services/testing/users.js')} */ (await importBuilt('services/testing/users.js'))
const { sampleInstance, sampleTask } = /** @type {typeof import('../../services/testing/instances.js')} */ (
  await importBuilt('services/testing/instances.js')
)
const { Collections } = /** @type {typeof import('../../store/collections.js')} */ (await importBuilt('store/collections.js'))

const SEEDED = Number(process.env.BENCH_SEEDED_INSTANCES ?? 100_000)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 20)
const TARGET_P95_MS = 250
const BATCH = 5_000
const DAY_MS = 86_400_000

await runBench(() => withTempDir('bench-queries-', (dataDir) => withStore(dataDir, measure)))

/** @param {import('../../store/port.js').Store} store @returns {Promise<boolean>} */
async function measure(store) {
  await deployHrApp(store)
  const admin = await createTestUser(store, { ...HR, fullName: 'Ada Admin', roles: ['admin'] })
  const eve = await createTestUser(store, { ...HR, fullName: 'Eve Employee', swimlanes: [] })
  const app = await buildService('engine', { config: testConfig(), store, logger: silentLogger })
  const url = await app.listen({ port: 0, host: '127.0.0.1' })

  /** @type {import('../../store/port.js').Collection<import('../../store/collections.js').StoredContext>} */
  const contextsCollection = store.collection(Collections.contexts)
  /** @type {import('../../store/port.js').Collection<import('../../store/collections.js').StoredActivity>} */
  const activitiesCollection = store.collection(Collections.activities)
  const now = Date.now()
  const seededStart = Date.now()
  /** @type {Array<{ processInstanceId: string, businessKey: string }>} */
  const sample = []
  for (let offset = 0; offset < SEEDED; offset += BATCH) {
    /** @type {import('../../store/collections.js').StoredContext[]} */
    const contexts = []
    /** @type {import('../../store/collections.js').StoredActivity[]} */
    const activities = []
    for (let index = offset; index < Math.min(offset + BATCH, SEEDED); index++) {
      const processId = index % 10 < 7 ? 'leave-request' : 'purchase'
      const running = index % 20 === 0
      const lastUpdate = new Date(now - (index % 365) * DAY_MS - index).toISOString()
      const initiator = index % 1000 === 0 ? eve.userId : `user-${index % 500}`
      const processInstanceId = `pi-${index}`
      const businessKey = `BK-${index}`
      const instance = sampleInstance({
        processInstanceId,
        processId,
        businessKey,
        initiator,
        lastUpdate,
        processStart: lastUpdate,
        processStatus: running ? 'running' : 'completed',
        tasks: [sampleTask({ taskId: `task-${index}`, status: running ? 'open' : 'completed', userId: initiator })],
      })
      contexts.push({
        _id: processInstanceId,
        processInstance: instance,
        dataInstance: { days: index % 30 },
        version: 1,
        appId: HR.appId,
        organizationId: HR.organizationId,
        processId,
        businessKey,
        processStatus: instance.processStatus,
        lastUpdate: new Date(lastUpdate),
        initiator,
      })
      activities.push({ processInstanceId, timeStamp: lastUpdate, type: 'start', userId: initiator })
      if (index % 2000 === 0) sample.push({ processInstanceId, businessKey })
    }
    await contextsCollection.insertMany(contexts)
    await activitiesCollection.insertMany(activities)
  }
  process.stdout.write(`seeded ${SEEDED} instances in ${((Date.now() - seededStart) / 1000).toFixed(1)} s\n`)

  const leaveSample = sample.filter((entry) => Number(entry.processInstanceId.slice(3)) % 10 < 7)
  const queries = [
    { name: 'activeProcessIds', path: '/query/activeProcessIds', body: { ...HR, processId: 'leave-request' } },
    {
      name: 'processIdsUpdatedBetween (7 days)',
      path: '/query/processIdsUpdatedBetween',
      body: { ...HR, processId: 'leave-request', date1: new Date(now - 7 * DAY_MS).toISOString() },
    },
    {
      name: `processInstanceContextAndActivity (${leaveSample.length} ids)`,
      path: '/query/processInstanceContextAndActivity',
      body: { ...HR, processId: 'leave-request', processInstances: leaveSample },
    },
  ]
  /** @type {Array<[string, boolean]>} */
  const targets = []
  try {
    for (const user of [
      { label: 'admin', userId: admin.userId },
      { label: 'user', userId: eve.userId },
    ]) {
      for (const query of queries) {
        /** @type {number[]} */
        const timings = []
        let results = 0
        let status = 200
        for (let round = 0; round < REPEAT + 2 && status === 200; round++) {
          const started = performance.now()
          const response = await fetch(`${url}${query.path}`, {
            method: 'POST',
            headers: { user: user.userId, 'content-type': 'application/json' },
            body: JSON.stringify(query.body),
          })
          const answer = /** @type {unknown[]} */ (await response.json())
          const elapsed = performance.now() - started
          status = response.status
          results = answer.length
          if (round >= 2) timings.push(elapsed) // the first two warm the caches and the JIT
        }
        timings.sort((a, b) => a - b)
        const p95 = percentile(timings, 95)
        const label = `${user.label.padEnd(5)} ${query.name.padEnd(44)}`
        process.stdout.write(
          `${label} ${status === 200 ? `${String(results).padStart(5)} results` : `answered ${status}`}  median ` +
            `${percentile(timings, 50).toFixed(1)} ms  p95 ${p95.toFixed(1)} ms\n`,
        )
        targets.push([`${label} answered 200, p95 < ${TARGET_P95_MS} ms`, status === 200 && p95 < TARGET_P95_MS])
      }
    }
  } finally {
    await app.close()
  }
  return reportTargets(targets)
}
