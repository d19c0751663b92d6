#!/usr/bin/env node
// @ts-check
/**
 * A bulk suspend of 10,000 leave requests through the gateway of the built all-in-one on the
 * embedded store (docs/reference/lifecycle.md#bulk-operations): one real instance is started, 9,999 copies of it are stored, then
 * `POST /external/process/bulk` suspends every running one and `GET /external/batchjob/:jobId` is
 * polled until the job is done. The time from the request to `done` is the figure.
 *
 * Target: all of them suspended, none failed, in under 30 s ("well under a minute").
 * Environment: BENCH_BULK_INSTANCES (default 10000).
 */
import { randomUUID } from 'node:crypto'
import { importBuilt } from './support/dist.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { deployExamples, storeInstanceCopies, withStore, withTempDir } from './support/store.mjs'

const { createTestUser } = await importBuilt('services/testing/users.js')
const { Collections } = await importBuilt('store/collections.js')

const INSTANCES = Number(process.env.BENCH_BULK_INSTANCES ?? 10_000)
const TARGET_MS = 30_000
const TENANT = { appId: 'hr', organizationId: 'acme' }

/** @param {string} origin @param {string} method @param {string} path @param {string} user @param {object} [body] */
async function call(origin, method, path, user, body) {
  const response = await fetch(`${origin}${path}`, {
    method,
    headers: { user, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  })
  /** @type {any} */
  const envelope = await response.json()
  if (response.status !== 200) throw new Error(`${method} ${path} answered ${response.status}: ${JSON.stringify(envelope)}`)
  return envelope.data
}

/**
 * Stores `count` copies of the running instance, each with its own business key and task ids; answers how many run.
 * @param {string} dataDir @param {number} count
 */
async function seedCopies(dataDir, count) {
  return withStore(dataDir, async (store) => {
    await storeInstanceCopies(store, {
      processStatus: 'running',
      count,
      copy: (/** @type {any} */ template, /** @type {number} */ i, /** @type {string} */ processInstanceId) => {
        const tasks = template.tasks.map((/** @type {any} */ task) => ({ ...task, taskId: randomUUID() }))
        return { processInstance: { ...template, processInstanceId, businessKey: `LR-bulk-${i}`, tasks } }
      },
    })
    return store.collection(Collections.contexts).countDocuments({ processStatus: 'running' })
  })
}

await runBench(() =>
  withTempDir('bench-bulk-', async (dataDir) => {
    const { admin, employee } = await withStore(dataDir, async (store) => {
      await deployExamples(store, ['leave-request', 'hr-constants', 'leave-bookings'], TENANT)
      return {
        admin: (await createTestUser(store, { ...TENANT, fullName: 'Bulk Admin', roles: ['admin'] })).userId,
        employee: (await createTestUser(store, { ...TENANT, fullName: 'Bulk Employee', swimlanes: ['employee'] })).userId,
      }
    })
    let service = await startAllInOne({ dataDir })
    try {
      await call(service.gateway, 'POST', '/context', employee, {
        ...TENANT,
        processId: 'leave-request',
        input: { days: 3, reason: 'Benchmark' },
      })
    } finally {
      await service.stop()
    }
    const running = await seedCopies(dataDir, INSTANCES - 1)
    process.stdout.write(`bulk benchmark: ${running} running instances stored\n`)

    service = await startAllInOne({ dataDir })
    try {
      const started = performance.now()
      const { jobId } = await call(service.gateway, 'POST', '/external/process/bulk', admin, {
        ...TENANT,
        operation: 'suspend',
        filter: { processId: 'leave-request', processStatus: 'running' },
        reason: 'Benchmark',
      })
      /** @type {any} */
      let job
      for (;;) {
        job = await call(service.gateway, 'GET', `/external/batchjob/${jobId}?appId=${TENANT.appId}`, admin)
        if (job.status === 'done' || job.status === 'failed') break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      const elapsedMs = performance.now() - started
      const progress = job.progress ?? { total: 0, done: 0, failed: [] }
      process.stdout.write(
        `  ${progress.done} of ${progress.total} suspended, ${progress.failed.length} failed, job ${job.status}, in ` +
          `${(elapsedMs / 1000).toFixed(1)} s (${(progress.done / (elapsedMs / 1000)).toFixed(0)} instances/s)\n`,
      )
      const suspended = await call(service.gateway, 'POST', '/query/activeProcessIds', admin, {
        ...TENANT,
        processId: 'leave-request',
      }).catch(() => null)
      if (suspended)
        process.stdout.write(`  running instances the query still finds: ${Array.isArray(suspended) ? suspended.length : 'n/a'}\n`)
      return reportTargets([
        [`all ${running} suspended, none failed`, job.status === 'done' && progress.done === running && progress.failed.length === 0],
        [`under ${TARGET_MS / 1000} s`, elapsedMs < TARGET_MS],
      ])
    } finally {
      await service.stop()
    }
  }),
)
