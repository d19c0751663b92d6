#!/usr/bin/env node
// @ts-check
/**
 * Leave-request lifecycles through the gateway of the built all-in-one on the embedded store:
 * 32 concurrent clients each run whole lifecycles — start (`POST /context`), submit
 * (`POST /action/complete` by the employee), approve (`POST /action/complete` by a manager) — for a
 * fixed time; then 100,000 instances are stored and the same load runs again.
 *
 * Targets: at least 300 lifecycles/s, p99 request latency under 50 ms, and the second run
 * within 20% of the first. Exit code 1 when a target is missed or requests fail.
 *
 * With BENCH_BASELINE_REF (a commit, e.g. fa55766) it compares that tree with this one in one run:
 * the baseline is checked out and built under .bench/trees/ (support/baseline.mjs), each tree seeds
 * its own store and runs in an all-in-one of its own, both up for the whole comparison; after each
 * warmed up, BENCH_ROUNDS (default 5) rounds load each tree for BENCH_DURATION_S in slices of
 * BENCH_SLICE_S (3), the two taking turns slice by slice, so that the machine's drift hits both alike.
 * It prints each tree's medians, their ratio, and this tree's ratio to the baseline round by round;
 * the targets are judged on the median of those rounds' ratios (pairedRatios): service CPU per
 * lifecycle at most 0.5× the baseline's, lifecycles/s at least 1.8× the baseline's, p99 under 50 ms
 * (no seeded second run).
 *
 * Service CPU is every thread of the service's process and of the processes it started (sandboxes),
 * read from /proc as the measured window begins and ends (support/proc.mjs).
 *
 * Environment: BENCH_DURATION_S (default 20, per run; 15 per tree and round with a baseline), BENCH_WARMUP_S (15, before each
 * run; with a baseline, once per tree before the rounds), BENCH_CLIENTS (32),
 * BENCH_SEEDED_INSTANCES (100000; 0 skips the second run), BENCH_BASELINE_REF, BENCH_ROUNDS, BENCH_SLICE_S,
 * BENCH_SLICE_WARMUP_S (1: the uncounted start of each slice),
 * BENCH_CPU_PROFILE_DIR (the service writes a V8 CPU profile of each thread there), BENCH_NODE_ARGS (flags
 * for the service's node, e.g. `--max-semi-space-size=64`),
 * BENCH_TELEMETRY (`metrics`, the default as deployed; `off`: METRICS_ENABLED=false; `tracing`:
 * metrics and OTLP traces, exported to a local receiver that discards them) — the cost of
 * observability is the difference between these (target: metrics cost at most 5%).
 * BENCH_VIA=engine sends the load straight to the engine's port instead of the gateway's (raw
 * answers, no envelope): what the gateway costs is the difference (the verdict then says it was not
 * measured through the gateway).
 * Everything runs on 127.0.0.1 in a temporary data dir, removed at the end.
 */
import { createServer } from 'node:http'
import { builtTree } from './support/baseline.mjs'
import { DIST, importBuilt } from './support/dist.mjs'
import { chooseTarget, clientFor, measure, report, seedApp, summary, WARMUP_MS } from './support/lifecycle-load.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { startAllInOne } from './support/process.mjs'
import { median } from './support/stats.mjs'
import { storeInstanceCopies, withStore, withTempDir } from './support/store.mjs'

const { Collections } = await importBuilt('store/collections.js')

/** @typedef {import('./support/lifecycle-load.mjs').Pair} Pair */
/** @typedef {import('./support/lifecycle-load.mjs').Tree} Tree */

const BASELINE_REF = process.env.BENCH_BASELINE_REF
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32)
const DURATION_MS = Number(process.env.BENCH_DURATION_S ?? (BASELINE_REF ? 15 : 20)) * 1000
const SEEDED_INSTANCES = Number(process.env.BENCH_SEEDED_INSTANCES ?? 100_000)
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5)
/** Against a baseline, each tree's time in a round is cut into slices of this length, the trees taking turns. */
const SLICE_MS = Number(process.env.BENCH_SLICE_S ?? 3) * 1000
/** Each slice's own warm-up, not counted: the first lifecycles after the tree was idle through the other's slice. */
const SLICE_WARMUP_MS = Number(process.env.BENCH_SLICE_WARMUP_S ?? 1) * 1000
const TARGET = { lifecyclesPerSecond: 300, p99Ms: 50, seededWithin: 0.2 }
/** Against the baseline: this tree's CPU per lifecycle at most, and its lifecycles/s at least, these times the baseline's. */
const BASELINE_TARGET = { cpuRatio: 0.5, throughputRatio: 1.8 }
const TELEMETRY = process.env.BENCH_TELEMETRY ?? 'metrics'
if (!['off', 'metrics', 'tracing'].includes(TELEMETRY)) throw new Error(`BENCH_TELEMETRY must be off, metrics or tracing, got ${TELEMETRY}`)

/** An OTLP receiver that reads and drops what it is sent, so tracing costs what exporting costs. */
async function discardingReceiver() {
  const server = createServer((request, response) => {
    request.resume()
    request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end('{}'))
  })
  await new Promise((listening) => server.listen(0, '127.0.0.1', () => listening(undefined)))
  const address = /** @type {import('node:net').AddressInfo} */ (server.address())
  return { url: `http://127.0.0.1:${address.port}`, close: () => new Promise((closed) => server.close(() => closed(undefined))) }
}

/** The service's environment for BENCH_TELEMETRY. @param {string | undefined} receiverUrl @returns {Record<string, string>} */
function telemetryEnv(receiverUrl) {
  if (TELEMETRY === 'off') return { METRICS_ENABLED: 'false' }
  if (TELEMETRY === 'tracing' && receiverUrl) return { OTEL_EXPORTER_OTLP_ENDPOINT: receiverUrl }
  return {}
}

/**
 * Stores `count` more instances like the ones the first run finished (context, notification,
 * activities and leave booking), under new ids and business keys, spread over the last 30 days; answers how many are stored in all.
 * @param {string} dataDir
 * @param {number} count
 */
async function seedInstances(dataDir, count) {
  return withStore(dataDir, async (store) => {
    const now = Date.now()
    await storeInstanceCopies(store, {
      processStatus: 'completed',
      count,
      withHistory: true,
      copy: (/** @type {any} */ template, /** @type {number} */ i, /** @type {string} */ processInstanceId) => {
        const lastUpdate = new Date(now - Math.floor(Math.random() * 30 * 24 * 3600 * 1000))
        return {
          processInstance: { ...template, processInstanceId, businessKey: `LR-seed-${i}`, lastUpdate: lastUpdate.toISOString() },
          lastUpdate,
        }
      },
    })
    return await store.collection(Collections.contexts).countDocuments()
  })
}

/**
 * The all-in-one of `tree` with BENCH_TELEMETRY's settings, writing CPU profiles when BENCH_CPU_PROFILE_DIR asks for them.
 * @param {Tree} tree @param {string} dataDir @param {string | undefined} receiverUrl
 */
function startService(tree, dataDir, receiverUrl) {
  const profileDir = process.env.BENCH_CPU_PROFILE_DIR
  const nodeArgs = [
    ...(profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : []),
    ...(process.env.BENCH_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== ''),
  ]
  return startAllInOne({ dataDir, env: telemetryEnv(receiverUrl), nodeArgs, dist: tree.dist })
}

/**
 * How many flow-function runs of the whole run went to the worker pool, and why, from the engine's
 * metrics (said only when the tree counts them and metrics are on). @param {string} engine
 */
async function reportPoolMoves(engine) {
  const exposition = await (await fetch(`${engine}/metrics`)).text().catch(() => '')
  if (!exposition.includes('workflow_flow_function_runs_moved_to_pool_total')) return
  const samples = (/** @type {RegExp} */ pattern) =>
    [...exposition.matchAll(pattern)].map((match) => ({ label: match[1] ?? '', value: Number(match[2]) })).filter(({ value }) => value > 0)
  const total = (/** @type {Array<{ value: number }>} */ found) => found.reduce((sum, { value }) => sum + value, 0)
  const moved = samples(/^workflow_flow_function_runs_moved_to_pool_total\{reason="([^"]+)"\} (\d+)$/gm)
  const runs = total(samples(/^workflow_flow_function_duration_seconds_count\{(.*)\} (\d+)$/gm))
  const reasons = moved.map(({ label, value }) => `${label} ${value}`).join(', ')
  process.stdout.write(`    flow-function runs moved to the worker pool: ${total(moved)} of ${runs}${reasons ? ` (${reasons})` : ''}\n`)
}

/**
 * One run: the all-in-one of `tree` started on `dataDir`, loaded, and stopped again.
 * @param {Tree} tree @param {string} dataDir @param {Pair[]} pairs @param {string} label
 */
async function run(tree, dataDir, pairs, label) {
  const receiver = TELEMETRY === 'tracing' ? await discardingReceiver() : undefined
  const service = await startService(tree, dataDir, receiver?.url)
  try {
    const target = await chooseTarget(service, /** @type {Pair} */ (pairs[0]))
    process.stdout.write(`  through the ${target.via} (${target.origin})\n`)
    const result = await measure(target.origin, pairs, service.pid, DURATION_MS)
    report(label, result)
    await reportPoolMoves(service.engine)
    return { ...result, via: target.via }
  } finally {
    await service.stop()
    await receiver?.close()
  }
}

/** @typedef {Awaited<ReturnType<typeof run>>} Result */

/** @param {Result[]} results */
function medians(results) {
  return {
    lifecyclesPerSecond: median(results.map((result) => result.lifecyclesPerSecond)),
    cpuMsPerLifecycle: median(results.flatMap((result) => (result.cpuMsPerLifecycle === undefined ? [] : [result.cpuMsPerLifecycle]))),
    p99: median(results.map((result) => result.p99)),
    errors: results.reduce((sum, result) => sum + result.errors, 0),
    throughGateway: results.every((result) => result.via === 'gateway'),
  }
}

/**
 * This tree's ratios to the baseline, round by round (a round's slices of both trees take turns), and
 * their medians: the machine's speed drifts from minute to minute by more than the difference being
 * measured, and a round's two results share it, where the median of each tree's results can come from
 * rounds of different speeds (docs/performance.md#against-fa55766-round-by-round).
 * @param {Result[]} before @param {Result[]} now
 */
function pairedRatios(before, now) {
  /** @param {(result: Result) => number | undefined} figure */
  const ratios = (figure) => now.map((result, round) => (figure(result) ?? NaN) / (figure(/** @type {Result} */ (before[round])) ?? NaN))
  const cpu = ratios((result) => result.cpuMsPerLifecycle)
  const throughput = ratios((result) => result.lifecyclesPerSecond)
  const listed = (/** @type {number[]} */ values) => values.map((ratio) => ratio.toFixed(2)).join(' ')
  process.stdout.write(`  round by round, this tree / baseline: CPU per lifecycle ${listed(cpu)}; lifecycles/s ${listed(throughput)}\n`)
  return { cpuRatio: median(cpu), throughputRatio: median(throughput) }
}

/**
 * The slices of one tree in one round, as one result: their CPU, lifecycles and time summed, their
 * latencies together. @param {Array<Awaited<ReturnType<typeof measure>>>} slices @param {string} via
 */
function combined(slices, via) {
  const windows = slices.map((slice) => slice.window)
  const cpu = windows.map((window) => window.cpuMs)
  const sum = (/** @type {number[]} */ values) => values.reduce((total, value) => total + value, 0)
  return {
    ...summary({
      cpuMs: cpu.some((ms) => ms === undefined) ? undefined : sum(/** @type {number[]} */ (cpu)),
      lifecycles: sum(windows.map((window) => window.lifecycles)),
      durationMs: sum(windows.map((window) => window.durationMs)),
      latencies: windows.flatMap((window) => window.latencies).sort((a, b) => a - b),
      errors: sum(slices.map((slice) => slice.errors)),
      firstError: slices.find((slice) => slice.firstError)?.firstError,
    }),
    via,
  }
}

/**
 * A tree's all-in-one under load: where its lifecycles go, and the client that sends them.
 * @typedef {{ service: Awaited<ReturnType<typeof startService>>, origin: string, via: string, pairs: Pair[], client: Client }} Load
 * @typedef {ReturnType<typeof clientFor>} Client
 */

/**
 * The baseline and this tree, each on a store and in an all-in-one of its own, both up for the whole
 * comparison: each warmed up in turn (WARMUP_MS), then ROUNDS rounds in which each tree is loaded for
 * DURATION_MS in slices of SLICE_MS, the two taking turns slice by slice (the first to go alternating).
 * The VM's speed drifts from one minute to the next by more than the difference measured: slices
 * seconds apart share it, where two whole runs a minute apart need not
 * (docs/performance.md#the-two-trees-slice-by-slice). @param {string} ref
 */
async function compareWithBaseline(ref) {
  const baseline = builtTree(ref)
  /** @type {Tree[]} */
  const trees = [
    { label: `baseline ${baseline.commit.slice(0, 7)}`, dist: baseline.dist },
    { label: 'this tree', dist: DIST },
  ]
  return withTempDir('bench-lifecycle-baseline-', (baselineDir) =>
    withTempDir('bench-lifecycle-', async (currentDir) => {
      const dataDirs = [baselineDir, currentDir]
      const pairs = trees.map((tree, index) => seedApp(tree, /** @type {string} */ (dataDirs[index]), CLIENTS))
      const receiver = TELEMETRY === 'tracing' ? await discardingReceiver() : undefined
      /** @type {Load[]} */
      const loads = []
      try {
        for (const [index, tree] of trees.entries()) {
          const service = await startService(tree, /** @type {string} */ (dataDirs[index]), receiver?.url)
          const treePairs = /** @type {Pair[]} */ (pairs[index])
          const target = await chooseTarget(service, /** @type {Pair} */ (treePairs[0]))
          process.stdout.write(`  ${tree.label} through the ${target.via} (${target.origin})\n`)
          loads.push({ service, ...target, pairs: treePairs, client: clientFor(target.origin, treePairs.length) })
        }
        // A slice counts from SLICE_WARMUP_MS after the load comes back to its tree, which was idle meanwhile.
        const slice = (/** @type {number} */ index, /** @type {number} */ durationMs, warmupMs = SLICE_WARMUP_MS) => {
          const load = /** @type {Load} */ (loads[index])
          return measure(load.origin, load.pairs, load.service.pid, durationMs, { warmupMs, client: load.client })
        }
        for (const index of [0, 1]) await slice(index, WARMUP_MS, 0)
        const slices = Math.max(1, Math.round(DURATION_MS / SLICE_MS))
        /** @type {Result[][]} */
        const results = [[], []]
        for (let round = 1; round <= ROUNDS; round++) {
          process.stdout.write(`round ${round} of ${ROUNDS}\n`)
          /** @type {Array<Array<Awaited<ReturnType<typeof measure>>>>} */
          const measured = [[], []]
          for (let turn = 0; turn < slices; turn++) {
            for (const index of (round + turn) % 2 === 1 ? [0, 1] : [1, 0]) measured[index]?.push(await slice(index, DURATION_MS / slices))
          }
          for (const index of [0, 1]) {
            const result = combined(/** @type {Array<Awaited<ReturnType<typeof measure>>>} */ (measured[index]), loads[index]?.via ?? '')
            report(/** @type {Tree} */ (trees[index]).label, result)
            results[index]?.push(result)
          }
        }
        for (const load of loads) await reportPoolMoves(load.service.engine)
        return verdictAgainstBaseline(trees, results)
      } finally {
        for (const load of loads) {
          await load.client.pool.close()
          await load.service.stop()
        }
        await receiver?.close()
      }
    }),
  )
}

/**
 * Each tree's medians, their ratio, this tree's ratios round by round, and the targets.
 * @param {Tree[]} trees @param {Result[][]} results
 */
function verdictAgainstBaseline(trees, results) {
  const [before, now] = results.map(medians)
  if (!before || !now) throw new Error('no results')
  ;[before, now].forEach((summary, index) =>
    process.stdout.write(
      `  ${trees[index]?.label}, medians of ${ROUNDS}: ${summary.lifecyclesPerSecond.toFixed(1)} lifecycles/s, ` +
        `service CPU ${summary.cpuMsPerLifecycle.toFixed(2)} ms/lifecycle, p99 ${summary.p99.toFixed(1)} ms\n`,
    ),
  )
  process.stdout.write(
    `  ratio of the medians: CPU per lifecycle ${(now.cpuMsPerLifecycle / before.cpuMsPerLifecycle).toFixed(2)}×, ` +
      `lifecycles/s ${(now.lifecyclesPerSecond / before.lifecyclesPerSecond).toFixed(2)}×\n`,
  )
  const { cpuRatio, throughputRatio } = pairedRatios(/** @type {Result[]} */ (results[0]), /** @type {Result[]} */ (results[1]))
  process.stdout.write(
    `  this tree / baseline, median of the rounds' ratios: ` +
      `CPU per lifecycle ${cpuRatio.toFixed(2)}×, lifecycles/s ${throughputRatio.toFixed(2)}×\n`,
  )
  return reportTargets([
    [`service CPU per lifecycle ≤ ${BASELINE_TARGET.cpuRatio}× the baseline's`, cpuRatio <= BASELINE_TARGET.cpuRatio],
    [`lifecycles/s ≥ ${BASELINE_TARGET.throughputRatio}× the baseline's`, throughputRatio >= BASELINE_TARGET.throughputRatio],
    [`p99 < ${TARGET.p99Ms} ms`, now.p99 < TARGET.p99Ms],
    ['no failed lifecycles', before.errors === 0 && now.errors === 0],
    ['measured through the gateway', before.throughGateway && now.throughGateway],
  ])
}

/** This tree alone: a run on a fresh store, then one after SEEDED_INSTANCES more instances. */
async function measureThisTree() {
  /** @type {Tree} */
  const tree = { label: 'this tree', dist: DIST }
  return withTempDir('bench-lifecycle-', async (dataDir) => {
    const pairs = seedApp(tree, dataDir, CLIENTS)
    const fresh = await run(tree, dataDir, pairs, 'empty store')
    if (SEEDED_INSTANCES === 0) {
      return reportTargets([
        [`≥ ${TARGET.lifecyclesPerSecond} lifecycles/s`, fresh.lifecyclesPerSecond >= TARGET.lifecyclesPerSecond],
        [`p99 < ${TARGET.p99Ms} ms`, fresh.p99 < TARGET.p99Ms],
        ['no failed lifecycles', fresh.errors === 0],
        ['measured through the gateway', fresh.via === 'gateway'],
      ])
    }

    const seededStarted = Date.now()
    const total = await seedInstances(dataDir, SEEDED_INSTANCES)
    process.stdout.write(
      `  stored ${SEEDED_INSTANCES} more instances (${total} in all) in ${((Date.now() - seededStarted) / 1000).toFixed(1)} s\n`,
    )
    const seeded = await run(tree, dataDir, pairs, `${total} stored instances`)

    return reportTargets([
      [`≥ ${TARGET.lifecyclesPerSecond} lifecycles/s`, fresh.lifecyclesPerSecond >= TARGET.lifecyclesPerSecond],
      [`p99 < ${TARGET.p99Ms} ms`, fresh.p99 < TARGET.p99Ms],
      [
        `after ${SEEDED_INSTANCES} instances within ${TARGET.seededWithin * 100}% (lifecycles/s and p99)`,
        seeded.lifecyclesPerSecond >= fresh.lifecyclesPerSecond * (1 - TARGET.seededWithin) &&
          seeded.p99 <= Math.max(fresh.p99 * (1 + TARGET.seededWithin), TARGET.p99Ms),
      ],
      ['no failed lifecycles', fresh.errors === 0 && seeded.errors === 0],
      ['measured through the gateway', fresh.via === 'gateway' && seeded.via === 'gateway'],
    ])
  })
}

await runBench(async () => {
  const perRun = BASELINE_REF
    ? `${DURATION_MS / 1000} s per tree and round in slices of ${SLICE_MS / 1000} s after ${WARMUP_MS / 1000} s warm-up`
    : `${DURATION_MS / 1000} s per run after ${WARMUP_MS / 1000} s warm-up`
  const setting = `${CLIENTS} clients, ${perRun}, telemetry ${TELEMETRY}`
  process.stdout.write(`lifecycle benchmark: ${setting}${BASELINE_REF ? `, against ${BASELINE_REF} in ${ROUNDS} rounds` : ''}\n`)
  return BASELINE_REF ? compareWithBaseline(BASELINE_REF) : measureThisTree()
})
