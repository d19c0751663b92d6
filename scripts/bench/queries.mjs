#!/usr/bin/env node
// @ts-check
/**
 * The reporting queries with 100,000 stored instances (docs/reference/queries.md): an engine of the built code on the
 * embedded store, seeded with instances of two processes of one app (leave requests: 1 in 20
 * running, the rest completed, last updates spread over a year; purchases; 1 in 200 failed) plus
 * activity records, then each query is sent repeatedly over HTTP, as an admin (whole tenant) and
 * as users who see only their own instances or tasks. The paged queries (my tasks, instances,
 * incidents) are measured on their first page and on a page after a cursor.
 *
 * Targets: the paged queries' p95 under 100 ms, the older queries' under 250 ms. Exit code 1 when
 * one misses it or a request fails. Environment: BENCH_SEEDED_INSTANCES (default 100000), BENCH_REPEAT (20).
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
const { queryFields } = /** @type {typeof import('../../store/context-fields.js')} */ (await importBuilt('store/context-fields.js'))

const SEEDED = Number(process.env.BENCH_SEEDED_INSTANCES ?? 100_000)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 20)
const TARGET_P95_MS = 250
const PAGED_TARGET_P95_MS = 100
const BATCH = 5_000
const DAY_MS = 86_400_000

await runBench(() => withTempDir('bench-queries-', (dataDir) => withStore(dataDir, measure)))

/** @param {import('../../store/port.js').Store} store @returns {Promise<boolean>} */
async function measure(store) {
  await deployHrApp(store)
  const admin = await createTestUser(store, { ...HR, fullName: 'Ada Admin', roles: ['admin'] })
  const eve = await createTestUser(store, { ...HR, fullName: 'Eve Employee', swimlanes: [] })
  const max = await createTestUser(store, { ...HR, fullName: 'Max Manager', swimlanes: ['manager'] })
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
      const failed = index % 200 === 5
      // Half the running instances wait in the manager pool, the others with their initiator.
      const inPool = running && index % 40 === 20
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
        processStatus: running ? 'running' : failed ? 'failed' : 'completed',
        tasks: [
          sampleTask({
            taskId: `task-${index}`,
            status: running ? 'open' : 'completed',
            createdAt: lastUpdate,
            ...(inPool ? { swimlane: 'manager', stepId: 'approve' } : { userId: initiator }),
          }),
        ],
        threads: [
          failed
            ? {
                threadId: 'main',
                stepId: 'updatePayroll',
                status: 'failed',
                error: { message: 'Payroll offline', code: 'PAYROLL' },
                failedAt: lastUpdate,
              }
            : { threadId: 'main', stepId: 'request', status: running ? 'waiting' : 'done' },
        ],
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
        ...queryFields(instance),
      })
      activities.push({ processInstanceId, timeStamp: lastUpdate, type: 'start', userId: initiator })
      if (index % 2000 === 0) sample.push({ processInstanceId, businessKey })
    }
    await contextsCollection.insertMany(contexts)
    await activitiesCollection.insertMany(activities)
  }
  process.stdout.write(`seeded ${SEEDED} instances in ${((Date.now() - seededStart) / 1000).toFixed(1)} s\n`)

  const leaveSample = sample.filter((entry) => Number(entry.processInstanceId.slice(3)) % 10 < 7)
  const older = [
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
  /**
   * @type {Array<{ label: string, userId: string, name: string, path: string, body: Record<string, unknown>,
   *   target: number, paged?: boolean }>}
   */
  const queries = [
    ...[
      { label: 'admin', userId: admin.userId },
      { label: 'user', userId: eve.userId },
    ].flatMap((user) => older.map((query) => ({ ...user, ...query, target: TARGET_P95_MS }))),
    ...[
      { label: 'pool', userId: max.userId, name: 'myTasks (manager pool)', path: '/query/myTasks', body: {} },
      { label: 'user', userId: eve.userId, name: 'myTasks (assigned)', path: '/query/myTasks', body: {} },
      { label: 'admin', userId: admin.userId, name: 'instances', path: '/query/instances', body: {} },
      { label: 'admin', userId: admin.userId, name: 'instances (running)', path: '/query/instances', body: { status: 'running' } },
      {
        label: 'admin',
        userId: admin.userId,
        name: 'instances (leave-request, key BK-7*)',
        path: '/query/instances',
        body: { processId: 'leave-request', businessKey: 'BK-7' },
      },
      { label: 'admin', userId: admin.userId, name: 'instances (hasIncident)', path: '/query/instances', body: { hasIncident: true } },
      { label: 'user', userId: eve.userId, name: 'instances (what the user may see)', path: '/query/instances', body: {} },
      { label: 'admin', userId: admin.userId, name: 'incidents', path: '/query/incidents', body: {} },
    ].flatMap((query) => [
      { ...query, body: { ...HR, ...query.body }, target: PAGED_TARGET_P95_MS, paged: true },
      { ...query, name: `${query.name}, page 3`, body: { ...HR, ...query.body }, target: PAGED_TARGET_P95_MS, paged: true },
    ]),
  ]
  /** @param {string} userId @param {string} path @param {unknown} body */
  const send = async (userId, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { user: userId, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    })
    return { status: response.status, answer: /** @type {any} */ (await response.json()) }
  }
  /** @type {Array<[string, boolean]>} */
  const targets = []
  try {
    for (const query of queries) {
      let body = query.body
      if (query.name.endsWith(', page 3')) {
        // The cursor of the third page: what a client paging on sends.
        for (let page = 0; page < 2; page++) {
          const { answer } = await send(query.userId, query.path, body)
          if (answer.nextCursor) body = { ...query.body, cursor: answer.nextCursor }
        }
      }
      /** @type {number[]} */
      const timings = []
      let results = 0
      let status = 200
      for (let round = 0; round < REPEAT + 2 && status === 200; round++) {
        const started = performance.now()
        const sent = await send(query.userId, query.path, body)
        const elapsed = performance.now() - started
        status = sent.status
        results = query.paged ? sent.answer.items.length : sent.answer.length
        if (round >= 2) timings.push(elapsed) // the first two warm the caches and the JIT
      }
      timings.sort((a, b) => a - b)
      const p95 = percentile(timings, 95)
      const label = `${query.label.padEnd(5)} ${query.name.padEnd(46)}`
      process.stdout.write(
        `${label} ${status === 200 ? `${String(results).padStart(5)} results` : `answered ${status}`}  median ` +
          `${percentile(timings, 50).toFixed(1)} ms  p95 ${p95.toFixed(1)} ms\n`,
      )
      targets.push([`${label} answered 200, p95 < ${query.target} ms`, status === 200 && p95 < query.target])
    }
  } finally {
    await app.close()
  }
  return reportTargets(targets)
}
