// @ts-check
/**
 * Leave-request lifecycles (start via `POST /context`, submit, approve) routed in-process into an
 * engine over a temporary embedded store, as the all-in-one's gateway hands them over
 * (services/gateway/proxy/in-process-engine.ts), for the profile scripts beside this folder: no HTTP,
 * no gateway, only the engine's own work and its store's. (Fastify's `inject` would add about 100 µs
 * of its own per request, docs/performance.md#the-in-process-hop-without-inject.)
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importBuilt } from '../../bench/support/dist.mjs'
import { deployExamples } from '../../bench/support/store.mjs'

const TENANT = { appId: 'hr', organizationId: 'acme' }

/** @typedef {{ start: number, submit: number, approve: number }} StepTimes */

/**
 * An engine ready for lifecycles, on a fresh store in a temporary dir named after `prefix`; `run`
 * drives them, `close` stops the engine and removes the dir.
 * @param {{ prefix: string }} options
 */
export async function lifecycleEngine({ prefix }) {
  const { openStore } = await importBuilt('store/open.js')
  const { createTestUser } = await importBuilt('services/testing/users.js')
  const { buildService } = await importBuilt('services/build.js')
  const { testConfig, silentLogger } = await importBuilt('services/testing/harness.js')
  const { forwardInProcess } = await importBuilt('services/gateway/proxy/in-process-engine.js')
  const dataDir = mkdtempSync(join(tmpdir(), prefix))
  const store = await openStore({ dataDir })
  await deployExamples(store, ['leave-request', 'hr-constants', 'leave-bookings'], TENANT)
  const employee = await createTestUser(store, { ...TENANT, fullName: 'Employee', swimlanes: ['employee'] })
  const manager = await createTestUser(store, { ...TENANT, fullName: 'Manager', swimlanes: ['manager'] })
  const app = await buildService('engine', { config: testConfig({ dataDir }), store, logger: silentLogger })
  await app.ready()

  /**
   * @param {string} url @param {string} user @param {object} body
   * @returns {Promise<{ ms: number, body: any }>}
   */
  async function post(url, user, body) {
    const started = performance.now()
    const payload = Buffer.from(JSON.stringify(body))
    const headers = { user, 'content-type': 'application/json', 'content-length': payload.length }
    const answer = await forwardInProcess(app, { method: 'POST', url, headers, body: payload, timeoutMs: 60_000 })
    if (answer.statusCode !== 200) throw new Error(`${url} answered ${answer.statusCode}: ${answer.body.toString('utf8')}`)
    return { ms: performance.now() - started, body: JSON.parse(answer.body.toString('utf8')) }
  }

  /** @returns {Promise<StepTimes>} */
  async function lifecycle() {
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
    return { start: start.ms, submit: submit.ms, approve: approve.ms }
  }

  return {
    /** The engine's store, for a script that looks at what it holds. */
    store,
    /**
     * @param {number} count @param {number} concurrency
     * @param {(index: number, times: StepTimes) => void} [onEach] told of each lifecycle as it ends, with its place in the order begun
     * @param {(index: number) => void} [onBegin] told of each lifecycle as it begins
     */
    async run(count, concurrency, onEach, onBegin) {
      let begun = 0
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (begun < count) {
            const index = begun++
            onBegin?.(index)
            const times = await lifecycle()
            onEach?.(index, times)
          }
        }),
      )
    },
    async close() {
      await app.close()
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
