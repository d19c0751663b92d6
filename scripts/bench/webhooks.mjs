#!/usr/bin/env node
// @ts-check
/**
 * Webhook delivery (docs/reference/events.md#webhooks), on the built all-in-one over the embedded store, with a receiver on
 * 127.0.0.1 that answers 204 at once:
 *
 * 1. Deliveries per second: BENCH_WEBHOOK_DELIVERIES pending deliveries (over as many instances as
 *    there are, 10 events each, so per-instance order applies) are stored before the service
 *    starts; the rate is counted from the first arrival to the last.
 * 2. The added latency of a completion (`POST /action/complete`, the submit of a leave request) with
 *    10 subscriptions to every event against none: one client, BENCH_WEBHOOK_ROUNDS alternating
 *    rounds of BENCH_WEBHOOK_COMPLETIONS completions each; medians and p99 per setting.
 *
 * Targets: every stored delivery arrives; no completion fails. The rates and latencies are
 * information (they depend on the machine and its neighbours).
 *
 * Environment: BENCH_WEBHOOK_DELIVERIES (5000), BENCH_WEBHOOK_COMPLETIONS (150), BENCH_WEBHOOK_ROUNDS (2).
 */
import { randomUUID } from 'node:crypto'
import { createServer } from 'node:http'
import { Pool } from 'undici'
import { importBuilt } from './support/dist.mjs'
import { timedPost } from './support/http.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { median, percentile } from './support/stats.mjs'
import { deployExamples, withStore, withTempDir } from './support/store.mjs'

const { createTestUser } = await importBuilt('services/testing/users.js')
const { Collections } = await importBuilt('store/collections.js')
const { NotificationEventType } = await importBuilt('openapi/generated/schemas.js')

const DELIVERIES = Number(process.env.BENCH_WEBHOOK_DELIVERIES ?? 5000)
const COMPLETIONS = Number(process.env.BENCH_WEBHOOK_COMPLETIONS ?? 150)
const ROUNDS = Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 2)
const EVENTS_PER_INSTANCE = 10
const TENANT = { appId: 'hr', organizationId: 'acme' }
/** Every event type of the contract. @type {string[]} */
const ALL_EVENTS = NotificationEventType.anyOf.map((/** @type {{ const: string }} */ literal) => literal.const)
const ENV = { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1', BATCH_POLL_MS: '100' }

/** A receiver that answers 204 at once and counts what arrives, with the time of each arrival. */
async function instantReceiver() {
  /** @type {number[]} */
  const arrivals = []
  const ids = new Set()
  const server = createServer((request, response) => {
    ids.add(request.headers['x-workflow-delivery'])
    request.resume()
    request.on('end', () => {
      arrivals.push(performance.now())
      response.writeHead(204).end()
    })
  })
  await new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(undefined)))
  const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    ids,
    close: () => new Promise((resolve) => server.close(() => resolve(undefined))),
  }
}

/** @param {any} store @param {string} url */
async function insertSubscription(store, url) {
  const subscription = {
    _id: randomUUID(),
    ...TENANT,
    url,
    events: ALL_EVENTS,
    processIds: [],
    secret: randomUUID() + randomUUID(),
    createdAt: new Date(),
  }
  await store.collection(Collections.webhookSubscriptions).insertOne(subscription)
  return subscription
}

/** Part 1: pending deliveries stored before the start, drained by the worker. */
async function deliveriesPerSecond() {
  const receiver = await instantReceiver()
  try {
    return await withTempDir('bench-webhooks-', async (dataDir) => {
      await withStore(dataDir, async (store) => {
        const subscription = await insertSubscription(store, receiver.url)
        const now = new Date()
        const body = JSON.stringify({
          eventType: 'Updated',
          processInstance: { processInstanceId: 'x', tasks: [], threads: [] },
          padding: 'x'.repeat(1500),
        })
        const docs = []
        for (let i = 0; i < DELIVERIES; i++) {
          const processInstanceId = `pi-${Math.floor(i / EVENTS_PER_INSTANCE)}`
          docs.push({
            _id: randomUUID(),
            subscriptionId: subscription._id,
            ...TENANT,
            processId: 'leave-request',
            processInstanceId,
            eventType: 'Updated',
            orderKey: `${subscription._id} ${processInstanceId}`,
            sequence: (i % EVENTS_PER_INSTANCE) + 1,
            body,
            status: 'pending',
            tries: 0,
            dueAt: now,
            createdAt: now,
          })
        }
        for (let offset = 0; offset < docs.length; offset += 2000)
          await store.collection(Collections.webhookDeliveries).insertMany(docs.slice(offset, offset + 2000))
      })
      const service = await startAllInOne({ dataDir, env: ENV })
      try {
        const deadline = Date.now() + 300_000
        while (receiver.ids.size < DELIVERIES && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
      } finally {
        await service.stop()
      }
      const first = receiver.arrivals[0] ?? 0
      const last = receiver.arrivals[receiver.arrivals.length - 1] ?? 0
      const perSecond = receiver.arrivals.length > 1 ? (receiver.arrivals.length - 1) / ((last - first) / 1000) : 0
      process.stdout.write(
        `  ${receiver.ids.size} of ${DELIVERIES} deliveries arrived (${receiver.arrivals.length} requests), ` +
          `${perSecond.toFixed(0)} deliveries/s from the first to the last\n`,
      )
      return { arrived: receiver.ids.size, perSecond }
    })
  } finally {
    await receiver.close()
  }
}

/** Part 2: completions with no subscription and with 10, alternating. */
async function completionLatency() {
  const receiver = await instantReceiver()
  try {
    return await withTempDir('bench-webhooks-latency-', async (dataDir) => {
      const users = await withStore(dataDir, async (store) => {
        await deployExamples(store, ['leave-request', 'hr-constants', 'leave-bookings'], TENANT)
        const employee = await createTestUser(store, { ...TENANT, fullName: 'Bench Employee', swimlanes: ['employee'] })
        return { employee: employee.userId }
      })
      const service = await startAllInOne({ dataDir, env: ENV })
      const pool = new Pool(service.gateway, { connections: 2 })
      /** @type {Record<string, number[]>} */
      const samples = { none: [], ten: [] }
      let failed = 0
      /** @type {string[]} */
      let subscriptions = []
      try {
        const admin = new Pool(service.gateway, { connections: 1 })
        const subscribe = async () => {
          for (let i = 0; i < 10; i++) {
            const answer = await admin.request({
              method: 'POST',
              path: '/subscription/create',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ url: receiver.url, events: ALL_EVENTS, ...TENANT }),
            })
            const created = /** @type {any} */ (await answer.body.json())
            if (answer.statusCode !== 200) throw new Error(`subscribing answered ${answer.statusCode}: ${JSON.stringify(created)}`)
            subscriptions.push(created.data.subscriptionId)
          }
        }
        const unsubscribe = async () => {
          for (const id of subscriptions) {
            const answer = await admin.request({
              method: 'DELETE',
              path: `/subscription/delete?organizationId=acme&appId=hr`,
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify({ id }),
            })
            await answer.body.dump()
          }
          subscriptions = []
        }
        /** @param {number[]} into */
        const completions = async (into) => {
          for (let i = 0; i < COMPLETIONS; i++) {
            const started = await timedPost(pool, '/context', users.employee, {
              ...TENANT,
              processId: 'leave-request',
              input: { days: 3, reason: 'Benchmark' },
            })
            const session = JSON.parse(started.text).data
            const instance = session.context.processInstance
            const submit = await timedPost(pool, '/action/complete', users.employee, {
              ...TENANT,
              processId: 'leave-request',
              processInstanceId: instance.processInstanceId,
              businessKey: instance.businessKey,
              taskId: session.formContext.task.taskId,
              actionType: 'complete',
              dataInstance: { days: 3, reason: 'Benchmark' },
            })
            if (submit.status !== 200) failed++
            else into.push(submit.ms)
          }
        }
        await completions([]) // warm-up
        for (let round = 0; round < ROUNDS; round++) {
          await completions(/** @type {number[]} */ (samples.none))
          await subscribe()
          await completions(/** @type {number[]} */ (samples.ten))
          await unsubscribe()
        }
        await admin.close()
      } finally {
        await pool.close()
        await service.stop()
      }
      /** @param {number[]} values */
      const summary = (values) => {
        const sorted = [...values].sort((a, b) => a - b)
        return { p50: median(sorted), p99: percentile(sorted, 99) }
      }
      const none = summary(/** @type {number[]} */ (samples.none))
      const ten = summary(/** @type {number[]} */ (samples.ten))
      process.stdout.write(
        `  completion without subscriptions: p50 ${none.p50.toFixed(2)} ms, p99 ${none.p99.toFixed(2)} ms ` +
          `(${samples.none?.length} completions)\n`,
      )
      process.stdout.write(
        `  completion with 10 subscriptions: p50 ${ten.p50.toFixed(2)} ms, p99 ${ten.p99.toFixed(2)} ms ` +
          `(${samples.ten?.length} completions, ${receiver.ids.size} deliveries received meanwhile)\n`,
      )
      process.stdout.write(
        `  added by 10 subscriptions: p50 ${(ten.p50 - none.p50).toFixed(2)} ms, p99 ${(ten.p99 - none.p99).toFixed(2)} ms\n`,
      )
      return { failed }
    })
  } finally {
    await receiver.close()
  }
}

await runBench(async () => {
  process.stdout.write(`deliveries per second (${DELIVERIES} stored, ${EVENTS_PER_INSTANCE} per instance, instant receiver)\n`)
  const throughput = await deliveriesPerSecond()
  process.stdout.write(`added latency of a completion with 10 subscriptions (${ROUNDS} rounds of ${COMPLETIONS} per setting)\n`)
  const latency = await completionLatency()
  return reportTargets([
    [`every stored delivery arrived (${throughput.arrived} of ${DELIVERIES})`, throughput.arrived === DELIVERIES],
    [`no completion failed (${latency.failed} failed)`, latency.failed === 0],
  ])
})
