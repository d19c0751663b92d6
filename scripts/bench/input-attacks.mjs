#!/usr/bin/env node
// @ts-check
/**
 * Tenants' input against the engine's thread (docs/security.md "Budgets"), through the gateway of
 * the built all-in-one on the embedded store: one tenant keeps sending its worst inputs — a start
 * whose `uniqueItems` input holds 10,000 distinct objects, a data search with an `$or` of 1,000
 * `$regex` clauses, and one with 2,000 `$eq` clauses over 5,000 documents — while another tenant
 * issues ordinary requests (a standalone function run and a process start) one after the other.
 * Each attack runs on its own for the bench's duration; prints the other tenant's p50/p99 during
 * each, and how the attacks were answered.
 *
 * Target: p99 of the other tenant's requests under 100 ms during every attack. Exit code 1 when it
 * is missed or an ordinary request fails.
 *
 * Environment: BENCH_DURATION_S (default 10, per attack), BENCH_ATTACKERS (2 concurrent attack loops).
 */
import { Pool } from 'undici'
import { importBuilt } from './support/dist.mjs'
import { ordinaryRequests } from './support/ordinary-requests.mjs'
import { timedPost as post } from './support/http.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { percentile } from './support/stats.mjs'
import { deployExamples, withStore, withTempDir } from './support/store.mjs'

const { deployExample, dataCollectionName } = await importBuilt('services/testing/models.js')
const { createTestUser } = await importBuilt('services/testing/users.js')
const { HR } = await importBuilt('services/testing/tenant.js')

const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 10) * 1000
const ATTACKERS = Number(process.env.BENCH_ATTACKERS ?? 2)
const TARGET = { p99Ms: 100 }
/** The attacking tenant: the same example models, with a `uniqueItems` input on its process. */
const ATTACKER = { appId: 'hr', organizationId: 'mallory' }
const DOCUMENTS = 5000

/** @param {string} dataDir */
async function seed(dataDir) {
  return withStore(dataDir, async (/** @type {any} */ store) => {
    await deployExamples(store, ['hr-constants', 'hr-lib', 'leave-bookings', 'leave-request'], HR)
    await deployExamples(store, ['hr-constants', 'hr-lib', 'leave-bookings'], ATTACKER)
    await deployExample(store, 'leave-request', {
      ...ATTACKER,
      edit: (/** @type {any} */ body) => {
        body.input.properties.items = { type: 'array', uniqueItems: true, items: { type: 'object' } }
      },
    })
    const bookings = store.collection(dataCollectionName(ATTACKER, 'leave-bookings'))
    await bookings.insertMany(Array.from({ length: DOCUMENTS }, (_, index) => ({ businessKey: `LR-${index}`, days: index % 30 })))
    const ann = await createTestUser(store, { ...HR, fullName: 'Ann Employee', swimlanes: ['employee'] })
    const mallory = await createTestUser(store, { ...ATTACKER, fullName: 'Mallory', swimlanes: ['employee'] })
    return { ann: ann.userId, mallory: mallory.userId }
  })
}

/** The attacks, each a request the attacker repeats. @type {Record<string, (user: string) => [string, object]>} */
const ATTACKS = {
  'uniqueItems start, 10,000 objects': () => [
    '/process/start',
    {
      ...ATTACKER,
      processId: 'leave-request',
      input: { days: 2, items: Array.from({ length: 10_000 }, (_, id) => ({ id, name: `item ${id}` })) },
    },
  ],
  'search, $or of 1,000 $regex': () => [
    '/external/data/search/Leave%20bookings',
    { ...ATTACKER, filter: { $or: Array.from({ length: 1000 }, (_, n) => ({ businessKey: { $regex: `^LR-${n}x` } })) } },
  ],
  'search, $or of 2,000 $eq': () => [
    '/external/data/search/Leave%20bookings',
    { ...ATTACKER, filter: { $or: Array.from({ length: 2000 }, (_, n) => ({ businessKey: `none-${n}` })) } },
  ],
  'search, scan within the filter bounds': () => [
    '/external/data/search/Leave%20bookings',
    { ...ATTACKER, filter: { $or: Array.from({ length: 150 }, (_, n) => ({ businessKey: `none-${n}` })) } },
  ],
}

await runBench(() =>
  withTempDir('bench-input-attacks-', async (dataDir) => {
    const users = await seed(dataDir)
    const service = await startAllInOne({ dataDir, env: { LOG_LEVEL: 'fatal' } })
    const pool = new Pool(service.gateway, { connections: 16 })
    try {
      for (let i = 0; i < 20; i++) await ordinaryRequests(pool, users.ann, HR)
      process.stdout.write(`input attacks: ${ATTACKERS} attack loops at a time, ${DURATION_MS / 1000} s each\n`)
      /** @type {Array<[string, boolean]>} */
      const targets = []
      for (const [name, attack] of Object.entries(ATTACKS)) {
        const until = performance.now() + DURATION_MS
        /** @type {Map<string, number>} */
        const answers = new Map()
        /** @type {number[]} */
        const attackMs = []
        const loops = Array.from({ length: ATTACKERS }, async () => {
          while (performance.now() < until) {
            const [path, body] = attack(users.mallory)
            const answer = await post(pool, path, users.mallory, body)
            const code = /"code":"(\w+)"/.exec(answer.text)?.[1] ?? ''
            const key = `${answer.status}${code ? ` ${code}` : ''}`
            answers.set(key, (answers.get(key) ?? 0) + 1)
            attackMs.push(answer.ms)
          }
        })
        /** @type {number[]} */
        const latencies = []
        while (performance.now() < until) latencies.push(...(await ordinaryRequests(pool, users.ann, HR)))
        await Promise.all(loops)
        latencies.sort((a, b) => a - b)
        attackMs.sort((a, b) => a - b)
        const p99 = percentile(latencies, 99)
        process.stdout.write(
          `  ${name}: attacks ${attackMs.length} answered ${[...answers].map(([key, n]) => `${key} ×${n}`).join(', ')} ` +
            `(p50 ${percentile(attackMs, 50).toFixed(0)} ms); other tenant ${latencies.length} requests, ` +
            `p50 ${percentile(latencies, 50).toFixed(2)} ms, p99 ${p99.toFixed(2)} ms\n`,
        )
        targets.push([`p99 of the other tenant < ${TARGET.p99Ms} ms during "${name}"`, p99 < TARGET.p99Ms])
      }
      return reportTargets(targets)
    } finally {
      await pool.close()
      await service.stop()
    }
  }),
)
