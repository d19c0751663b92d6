#!/usr/bin/env node
// @ts-check
/**
 * The service with a long history: the embedded store is seeded directly with BENCH_ENDED ended
 * (completed) leave requests, each with its activities, notification record and leave booking, their last changes
 * spread over a year, and BENCH_RUNNING running ones; then the built all-in-one starts on it. The
 * seeding writes through the store's own code (support/store.mjs), so the ended copies land in the
 * cold tier exactly as the service's own writes do (docs/performance.md#memory-the-embedded-stores-cold-tier).
 *
 * Measured: the service's resident memory after start (every process of it) and per 100,000 ended
 * instances, the time from start to serving, `GET /process/:id` of ended instances (after a warm-up),
 * the query routes (`processIdsUpdatedBetween` over a week of the seeded history alone) and the
 * newest page of notification records (views of the instances, ended ones among them),
 * and lifecycle throughput against an empty store: a copy of the store taken before the seeding (after
 * a first lifecycle run, whose completed instances the seeding copies), the two measured in
 * BENCH_ROUNDS interleaved rounds after it (the order alternating), so that the VM's drift over the
 * seeding's half hour hits both alike; the medians are compared.
 *
 * Targets: RSS ≤ 1 GiB after start, start-up ≤ 15 s, lifecycles/s within 20% of the empty store's,
 * `GET /process/:id` of an ended instance p99 < 20 ms, every query route p95 < 250 ms.
 *
 * With BENCH_BASELINE_REF (a commit whose store layout this tree's store is, e.g. the tree before a
 * change), the reads and queries of that tree (support/baseline.mjs) and this one are measured again
 * on the seeded store, BENCH_ROUNDS rounds of a service of each, the order alternating, and their
 * medians printed side by side: the figures in milliseconds move with the VM's speed, a ratio in
 * one run much less. The targets are still this tree's first figures.
 *
 * Environment: BENCH_ENDED (default 1000000), BENCH_RUNNING (10000), BENCH_DURATION_S (10, each
 * lifecycle run, after BENCH_WARMUP_S, 15), BENCH_ROUNDS (3, of each store), BENCH_CLIENTS (32),
 * BENCH_REPEAT (20, each query and 100× that many reads), BENCH_BASELINE_REF, BENCH_STORE_DIR.
 * Everything runs on 127.0.0.1 in a temporary data dir, removed at the end; with BENCH_STORE_DIR
 * the stores are kept in that folder instead (`seeded/`, `empty/` and the sample read back,
 * `sample.json`) and a later run with the same folder measures them again without seeding: the
 * seeding of a million instances takes half an hour or more, the measures minutes (the sizes are
 * then the kept ones, whatever BENCH_ENDED says). The seeded store keeps what each run's lifecycles
 * add (some thousand instances), all of them after the week the query reads.
 */
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { builtTree } from './support/baseline.mjs'
import { DIST, importBuilt } from './support/dist.mjs'
import { chooseTarget, clientFor, measure, report, seedApp, TENANT } from './support/lifecycle-load.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { serviceRssBytes } from './support/proc.mjs'
import { median, percentile } from './support/stats.mjs'
import { storeInstanceCopies, withStore, withTempDir } from './support/store.mjs'

const ENDED = Number(process.env.BENCH_ENDED ?? 1_000_000)
const RUNNING = Number(process.env.BENCH_RUNNING ?? 10_000)
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? 10) * 1000
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32)
const REPEAT = Number(process.env.BENCH_REPEAT ?? 20)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3)
const BASELINE_REF = process.env.BENCH_BASELINE_REF
const STORE_DIR = process.env.BENCH_STORE_DIR
const TARGET = { rssBytes: 1024 ** 3, startupMs: 15_000, lifecyclesWithin: 0.2, readP99Ms: 20, queryP95Ms: 250 }
const DAY_MS = 86_400_000
const MIB = 1024 ** 2
/** Every this many ended instances, one is kept to be read back. */
const SAMPLE_EVERY = Math.max(1, Math.floor(ENDED / 2000))

const { createTestUser } = await importBuilt('services/testing/users.js')

/** @typedef {import('./support/lifecycle-load.mjs').Pair} Pair */
/** @typedef {{ processInstanceId: string, businessKey: string }} Sampled */
/**
 * The seeded stores' facts: the lifecycle pairs, the admin reading, the ids read back, when the seeding ran,
 * the empty store's RSS, and the first lifecycle run (not kept in BENCH_STORE_DIR).
 * @typedef {{ pairs: Pair[], admin: string, sample: Sampled[], seededAt: number, emptyRss: number,
 *   first?: Awaited<ReturnType<typeof lifecycles>> }} Seeded
 */

/** The all-in-one on `dataDir`, and how long it took to serve. @param {string} dataDir */
async function startTimed(dataDir) {
  const started = performance.now()
  const service = await startAllInOne({ dataDir, env: {} })
  const startupMs = performance.now() - started
  const rss = serviceRssBytes(service.pid) ?? Number.NaN
  return { service, startupMs, rss }
}

/**
 * A lifecycle run against the service; answers its result.
 * @param {Awaited<ReturnType<typeof startAllInOne>>} service @param {Pair[]} pairs @param {string} label
 */
async function lifecycles(service, pairs, label) {
  const target = await chooseTarget(service, /** @type {Pair} */ (pairs[0]))
  const result = await measure(target.origin, pairs, service.pid, DURATION_MS)
  report(label, result)
  return result
}

/**
 * ROUNDS lifecycle runs on each store, a service started for each, the order alternating; answers
 * each store's runs. @param {Record<'empty' | 'seeded', string>} dirs @param {Pair[]} pairs
 */
async function interleavedLifecycles(dirs, pairs) {
  /** @type {Record<'empty' | 'seeded', Array<Awaited<ReturnType<typeof lifecycles>>>>} */
  const runs = { empty: [], seeded: [] }
  for (let round = 0; round < ROUNDS; round++) {
    /** @type {Array<'empty' | 'seeded'>} */
    const order = round % 2 === 0 ? ['empty', 'seeded'] : ['seeded', 'empty']
    for (const store of order) {
      const service = await startAllInOne({ dataDir: dirs[store], env: {} })
      try {
        runs[store].push(await lifecycles(service, pairs, `lifecycles, ${store} store, round ${round + 1} of ${ROUNDS}`))
      } finally {
        await service.stop()
      }
    }
  }
  return runs
}

/**
 * Stores the copies: ENDED of a completed lifecycle (with its activities and booking), RUNNING of a started one,
 * last changes spread over the year before `now`; answers the ids kept to read back.
 * @param {string} dataDir @param {number} now
 */
async function seedHistory(dataDir, now) {
  /** @type {Sampled[]} */
  const sample = []
  const started = performance.now()
  let dataDocuments = 0
  await withStore(dataDir, async (store) => {
    for (const [processStatus, count, withHistory] of /** @type {const} */ ([
      ['completed', ENDED, true],
      ['running', RUNNING, false],
    ])) {
      dataDocuments += await storeInstanceCopies(store, {
        processStatus,
        count,
        withHistory,
        copy: (/** @type {any} */ template, /** @type {number} */ i, /** @type {string} */ processInstanceId) => {
          const lastUpdate = new Date(now - (i % 365) * DAY_MS - i)
          const businessKey = `LR-${processStatus}-${i}`
          if (processStatus === 'completed' && i % SAMPLE_EVERY === 0) sample.push({ processInstanceId, businessKey })
          return { processInstance: { ...template, processInstanceId, businessKey, lastUpdate: lastUpdate.toISOString() }, lastUpdate }
        },
      })
    }
  })
  process.stdout.write(
    `  stored ${ENDED} ended and ${RUNNING} running instances (and ${dataDocuments} documents of their data collections) ` +
      `in ${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  )
  return sample
}

/**
 * `GET /process/:id` of the sampled ended instances by 8 clients: REPEAT × 10 reads to warm up (the
 * JIT and the caches, as the queries' first two answers do), then REPEAT × 100 timed ones; answers
 * the timed reads' p99 and failures.
 * @param {string} origin @param {string} user @param {Sampled[]} sample
 */
async function readEnded(origin, user, sample) {
  const client = clientFor(origin, 8)
  let failures = 0
  /**
   * The reads of `count` sampled instances from `offset` on, 8 at a time; answers their timings.
   * @param {number} offset @param {number} count
   */
  const reads = async (offset, count) => {
    /** @type {number[]} */
    const timings = []
    await Promise.all(
      Array.from({ length: 8 }, async (_, lane) => {
        for (let i = lane; i < count; i += 8) {
          const started = performance.now()
          const response = await client.pool.request({
            method: 'GET',
            path: `/process/${sample[(offset + i) % sample.length]?.processInstanceId}`,
            headers: { user },
          })
          await response.body.text()
          timings.push(performance.now() - started)
          if (response.statusCode !== 200) failures++
        }
      }),
    )
    return timings.sort((a, b) => a - b)
  }
  const warmUp = REPEAT * 10
  // The warm-up reads the end of the sample, the timed reads start at its beginning.
  const first = await reads(Math.max(0, sample.length - warmUp), warmUp)
  const timings = await reads(0, REPEAT * 100)
  await client.pool.close()
  process.stdout.write(
    `  GET /process/:id of ended instances: p50 ${percentile(timings, 50).toFixed(1)} ms, p99 ${percentile(timings, 99).toFixed(1)} ms ` +
      `(the ${warmUp} warm-up reads before them: p99 ${percentile(first, 99).toFixed(1)} ms)\n`,
  )
  return { p99: percentile(timings, 99), failures }
}

/**
 * The query routes as `user`, each REPEAT times after two to warm up; answers each one's target.
 * @param {string} origin @param {string} user @param {Sampled[]} sample @param {number} seededAt
 */
async function queries(origin, user, sample, seededAt) {
  const client = clientFor(origin)
  const processInstances = sample.slice(0, 50)
  const routes = [
    { name: 'activeProcessIds', path: '/query/activeProcessIds', body: { ...TENANT, processId: 'leave-request' } },
    {
      name: 'processIdsUpdatedBetween (7 days)',
      path: '/query/processIdsUpdatedBetween',
      // Seven whole days of the seeded year, ending a day before the seeding, so the week holds the
      // seeding's copies alone (ENDED × 7 / 365 of them, and as many running in proportion): the
      // first lifecycle run's instances date from the minutes before the seeding.
      body: {
        ...TENANT,
        processId: 'leave-request',
        date1: new Date(seededAt - 8 * DAY_MS).toISOString(),
        date2: new Date(seededAt - DAY_MS).toISOString(),
      },
    },
    {
      name: `processInstanceContextAndActivity (${processInstances.length} ids)`,
      path: '/query/processInstanceContextAndActivity',
      body: { ...TENANT, processId: 'leave-request', processInstances },
    },
    // The newest notification records of the app: views of the instances, ended ones among them.
    { name: 'notifications (a page of 50)', path: `/notifications/${TENANT.appId}?organizationId=${TENANT.organizationId}&limit=50` },
  ]
  /** @type {Array<[string, boolean]>} */
  const targets = []
  /** @type {Record<string, number>} each route's p95 */
  const p95s = {}
  for (const route of routes) {
    /** @type {number[]} */
    const timings = []
    let status = 200
    let answered = 0
    for (let round = 0; round < REPEAT + 2 && status === 200; round++) {
      const answer = route.body ? await client.post(route.path, user, route.body) : await client.get(route.path, user)
      status = answer.status
      answered = Array.isArray(answer.body) ? answer.body.length : 0
      if (round >= 2) timings.push(answer.ms) // the first two warm the caches and the JIT
    }
    timings.sort((a, b) => a - b)
    const p95 = percentile(timings, 95)
    const figures = `${answered} answered, median ${percentile(timings, 50).toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`
    process.stdout.write(`  ${route.name}: ${status === 200 ? figures : `answered ${status}`}\n`)
    targets.push([`${route.name} p95 < ${TARGET.queryP95Ms} ms`, status === 200 && p95 < TARGET.queryP95Ms])
    p95s[route.name] = status === 200 ? p95 : Number.NaN
  }
  await client.pool.close()
  return { targets, p95s }
}

/**
 * The reads and queries of the baseline's tree and this one on the seeded store, ROUNDS services of
 * each, the order alternating; prints each tree's medians.
 * @param {ReturnType<typeof builtTree>} baseline @param {string} dataDir @param {string} user @param {Sampled[]} sample
 * @param {number} seededAt
 */
async function againstBaseline(baseline, dataDir, user, sample, seededAt) {
  const trees = [
    { label: `baseline ${baseline.commit.slice(0, 7)}`, dist: baseline.dist },
    { label: 'this tree', dist: DIST },
  ]
  /** @type {Map<string, Record<string, number[]>>} */
  const figures = new Map(trees.map((tree) => [tree.label, {}]))
  for (let round = 0; round < ROUNDS; round++) {
    for (const tree of round % 2 === 0 ? trees : [...trees].reverse()) {
      process.stdout.write(`  ${tree.label}, round ${round + 1} of ${ROUNDS}:\n`)
      const service = await startAllInOne({ dataDir, env: {}, dist: tree.dist })
      try {
        const read = await readEnded(service.gateway, user, sample)
        const { p95s } = await queries(service.gateway, user, sample, seededAt)
        const mine = /** @type {Record<string, number[]>} */ (figures.get(tree.label))
        const add = (/** @type {string} */ name, /** @type {number} */ value) => (mine[name] ??= []).push(value)
        add('GET /process/:id p99', read.p99)
        for (const [route, p95] of Object.entries(p95s)) add(`${route} p95`, p95)
      } finally {
        await service.stop()
      }
    }
  }
  for (const [label, byFigure] of figures)
    process.stdout.write(
      `  ${label}, medians of ${ROUNDS}: ${Object.entries(byFigure)
        .map(([name, values]) => `${name} ${median(values).toFixed(1)} ms`)
        .join(', ')}\n`,
    )
}

/**
 * The users, models and a first lifecycle run on an empty store, copied to `emptyDir` before the
 * seeding, then the history stored in `dataDir`.
 * @param {string} dataDir @param {string} emptyDir @returns {Promise<Seeded>}
 */
async function seedStores(dataDir, emptyDir) {
  const pairs = seedApp({ label: 'this tree', dist: DIST }, dataDir, CLIENTS)
  // The reader of ended instances and the queries: an admin sees every instance of the tenant.
  const admin = await withStore(dataDir, (store) => createTestUser(store, { ...TENANT, fullName: 'Ada Admin', roles: ['admin'] }))
  // A first run on the empty store: its completed instances are what the seeding copies.
  const empty = await startTimed(dataDir)
  let first
  try {
    process.stdout.write(`  empty store: serving after ${(empty.startupMs / 1000).toFixed(1)} s, RSS ${(empty.rss / MIB).toFixed(0)} MiB\n`)
    first = await lifecycles(empty.service, pairs, 'lifecycles before the seeding')
  } finally {
    await empty.service.stop()
  }
  // The empty store the seeded one is compared with: the same users, models and first run, no history.
  cpSync(dataDir, emptyDir, { recursive: true })
  const seededAt = Date.now()
  const sample = await seedHistory(dataDir, seededAt)
  return { pairs, admin: admin.userId, sample, seededAt, emptyRss: empty.rss, first }
}

/**
 * The stores under `root`: seeded now, or (BENCH_STORE_DIR) as an earlier run left them there, whose
 * `sample.json` says what it seeded; the seeding writes that file last.
 * @param {string} root @returns {Promise<Seeded & { ended: number, dataDir: string, emptyDir: string }>}
 */
async function stores(root) {
  const [dataDir, emptyDir, saved] = [join(root, 'seeded'), join(root, 'empty'), join(root, 'sample.json')]
  if (STORE_DIR && existsSync(saved)) {
    /** @type {Seeded & { ended: number, running: number }} */
    const kept = JSON.parse(readFileSync(saved, 'utf8'))
    const seeded = new Date(kept.seededAt).toISOString()
    process.stdout.write(`  the stores kept in ${root}: ${kept.ended} ended and ${kept.running} running, seeded ${seeded}\n`)
    return { ...kept, dataDir, emptyDir }
  }
  const seeded = await seedStores(dataDir, emptyDir)
  if (STORE_DIR) writeFileSync(saved, JSON.stringify({ ...seeded, first: undefined, ended: ENDED, running: RUNNING }))
  return { ...seeded, ended: ENDED, dataDir, emptyDir }
}

/** A temporary folder for the stores, or BENCH_STORE_DIR, kept. @param {(root: string) => Promise<boolean>} use */
function inStoreDir(use) {
  if (!STORE_DIR) return withTempDir('bench-scale-', use)
  mkdirSync(STORE_DIR, { recursive: true })
  return use(STORE_DIR)
}

await runBench(() =>
  inStoreDir(async (root) => {
    process.stdout.write(
      `scale benchmark: ${ENDED} ended and ${RUNNING} running instances, ${CLIENTS} clients, ` +
        `${DURATION_MS / 1000} s runs, ${ROUNDS} rounds\n`,
    )
    // Built (once) before anything is measured, so that a build neither disturbs a figure nor fails after the seeding.
    const baseline = BASELINE_REF ? builtTree(BASELINE_REF) : undefined
    const { pairs, admin, sample, seededAt, emptyRss, first, ended, dataDir, emptyDir } = await stores(root)
    const seeded = await startTimed(dataDir)
    let read, queryTargets
    try {
      const perHundredThousand = ((seeded.rss - emptyRss) / Math.max(ended, 1)) * 100_000
      process.stdout.write(
        `  seeded store: serving after ${(seeded.startupMs / 1000).toFixed(1)} s, RSS ${(seeded.rss / MIB).toFixed(0)} MiB ` +
          `(${(perHundredThousand / MIB).toFixed(0)} MiB more per 100,000 ended instances)\n`,
      )
      read = await readEnded(seeded.service.gateway, admin, sample)
      queryTargets = (await queries(seeded.service.gateway, admin, sample, seededAt)).targets
    } finally {
      await seeded.service.stop()
    }
    if (baseline) await againstBaseline(baseline, dataDir, admin, sample, seededAt)
    const runs = await interleavedLifecycles({ empty: emptyDir, seeded: dataDir }, pairs)
    /** @param {Array<Awaited<ReturnType<typeof lifecycles>>>} storeRuns */
    const medians = (storeRuns) => ({
      perSecond: median(storeRuns.map((run) => run.lifecyclesPerSecond)),
      cpuMs: median(storeRuns.map((run) => run.cpuMsPerLifecycle ?? Number.NaN)),
    })
    const [fresh, loaded] = [medians(runs.empty), medians(runs.seeded)]
    process.stdout.write(
      `  lifecycles, medians of ${ROUNDS}: empty store ${fresh.perSecond.toFixed(1)}/s ` +
        `(${fresh.cpuMs.toFixed(2)} ms of service CPU each), ` +
        `seeded store ${loaded.perSecond.toFixed(1)}/s (${loaded.cpuMs.toFixed(2)} ms each): ` +
        `${((loaded.perSecond / fresh.perSecond - 1) * 100).toFixed(1)}%\n`,
    )
    return reportTargets([
      [`RSS after start ≤ ${TARGET.rssBytes / MIB} MiB`, seeded.rss <= TARGET.rssBytes],
      [`start-up to serving ≤ ${TARGET.startupMs / 1000} s`, seeded.startupMs <= TARGET.startupMs],
      [
        `lifecycles/s within ${TARGET.lifecyclesWithin * 100}% of the empty store's (medians)`,
        loaded.perSecond >= fresh.perSecond * (1 - TARGET.lifecyclesWithin),
      ],
      [`GET /process/:id of an ended instance p99 < ${TARGET.readP99Ms} ms, all 200`, read.p99 < TARGET.readP99Ms && read.failures === 0],
      ...queryTargets,
      ['no failed lifecycles', [...(first ? [first] : []), ...runs.empty, ...runs.seeded].every((run) => run.errors === 0)],
    ])
  }),
)
