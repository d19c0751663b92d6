#!/usr/bin/env node
// @ts-check
/**
 * The engine's cost per workflow request, without HTTP: leave-request lifecycles (start via
 * `POST /context`, submit, approve) through `inject` on an engine over a temporary embedded store,
 * `concurrency` of them at a time. Prints, after a warm-up quarter, the mean latency of each request
 * and the main thread's busy time per lifecycle (its event-loop utilisation): the figure that bounds
 * throughput, since the store's SQLite writes run on their own thread. Run it under
 * `node --cpu-prof` to see where the main thread's time goes.
 *
 * Usage: npx tsc -p . && node scripts/profile/engine-requests.mjs [lifecycles=1000] [concurrency=16]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importBuilt } from '../bench/support/dist.mjs'
import { deployExamples } from '../bench/support/store.mjs'

const { openStore } = await importBuilt('store/open.js')
const { createTestUser } = await importBuilt('services/testing/users.js')
const { buildService } = await importBuilt('services/build.js')
const { testConfig, silentLogger } = await importBuilt('services/testing/harness.js')

const LIFECYCLES = Number(process.argv[2] ?? 1000)
const CONCURRENCY = Number(process.argv[3] ?? 16)
const TENANT = { appId: 'hr', organizationId: 'acme' }
const dataDir = mkdtempSync(join(tmpdir(), 'profile-engine-'))
const store = await openStore({ dataDir })
await deployExamples(store, ['leave-request', 'hr-constants', 'leave-bookings'], TENANT)
const employee = await createTestUser(store, { ...TENANT, fullName: 'Employee', swimlanes: ['employee'] })
const manager = await createTestUser(store, { ...TENANT, fullName: 'Manager', swimlanes: ['manager'] })
const app = await buildService('engine', { config: testConfig({ dataDir }), store, logger: silentLogger })
await app.ready()

/**
 * @param {string} url
 * @param {string} user
 * @param {object} body
 * @returns {Promise<{ ms: number, body: any }>}
 */
async function post(url, user, body) {
  const started = performance.now()
  const answer = await app.inject({ method: 'POST', url, headers: { user, 'content-type': 'application/json' }, payload: body })
  if (answer.statusCode !== 200) throw new Error(`${url} answered ${answer.statusCode}: ${answer.body}`)
  return { ms: performance.now() - started, body: answer.json() }
}

const totals = { start: 0, submit: 0, approve: 0 }
const warmUp = Math.floor(LIFECYCLES / 4)
let begun = 0
let measured = 0
/** @type {ReturnType<typeof performance.eventLoopUtilization> | undefined} */
let utilisationFrom
let measuredFrom = 0

async function lifecycle() {
  const counted = begun++ >= warmUp
  if (counted && !utilisationFrom) {
    utilisationFrom = performance.eventLoopUtilization()
    measuredFrom = performance.now()
  }
  const start = await post('/context', employee.userId, { ...TENANT, processId: 'leave-request', input: { days: 3 } })
  const instance = start.body.context.processInstance
  const ids = { ...TENANT, processId: 'leave-request', processInstanceId: instance.processInstanceId, businessKey: instance.businessKey }
  const submit = await post('/action/complete', employee.userId, {
    ...ids,
    taskId: start.body.formContext.task.taskId,
    actionType: 'complete',
    dataInstance: { days: 3 },
  })
  const approve = await post('/action/complete', manager.userId, {
    ...ids,
    taskId: submit.body.formContext.task.taskId,
    actionType: 'complete',
    dataInstance: submit.body.context.dataInstance,
  })
  if (counted) {
    measured++
    totals.start += start.ms
    totals.submit += submit.ms
    totals.approve += approve.ms
  }
}

await Promise.all(
  Array.from({ length: CONCURRENCY }, async () => {
    while (begun < LIFECYCLES) await lifecycle()
  }),
)
const busy = performance.eventLoopUtilization(utilisationFrom)
const seconds = (performance.now() - measuredFrom) / 1000
process.stdout.write(
  `${measured} lifecycles, ${CONCURRENCY} at a time: ${(measured / seconds).toFixed(0)} lifecycles/s; main thread busy ` +
    `${(busy.active / measured).toFixed(2)} ms per lifecycle ` +
    `(utilisation ${(busy.utilization * 100).toFixed(0)}%); mean latency ${Object.entries(totals)
      .map(([name, ms]) => `${name} ${(ms / measured).toFixed(2)} ms`)
      .join(', ')}\n`,
)
await app.close()
await store.close()
rmSync(dataDir, { recursive: true, force: true })
