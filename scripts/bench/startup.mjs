#!/usr/bin/env node
// @ts-check
/**
 * How long the built services take to start serving on an empty embedded store, and the CPU that
 * takes: the engine alone and the all-in-one (gateway thread and engine), each started BENCH_ROUNDS
 * times (default 7) in a fresh data dir, until every one of its /liveness answers. A restart after
 * a crash or a deploy, a new replica while scaling out, and every test that starts a service pay it.
 *
 * Targets, on the 2-core machine: the all-in-one serving in under 4.5 s (median) and the engine
 * alone in under 2.5 s (both took about 6 and 3.4 s before each route's error serializer was shared,
 * docs/performance.md "Start-up"). With BENCH_BASELINE_REF (a commit) it starts that tree's services too, in the
 * same rounds, the order alternating (support/baseline.mjs builds it under .bench/trees/), and
 * prints the ratios; targets then also: CPU to serving at most the baseline's.
 */
import { join } from 'node:path'
import { builtTree } from './support/baseline.mjs'
import { DIST, requireBuild } from './support/dist.mjs'
import { freePort } from './support/free-port.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { serviceCpuMs } from './support/proc.mjs'
import { startAllInOne, startProcess } from './support/process.mjs'
import { median } from './support/stats.mjs'
import { withTempDir } from './support/store.mjs'

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 7)
const BASELINE_REF = process.env.BENCH_BASELINE_REF
const TARGET_MS = { 'all-in-one': 4500, engine: 2500 }

/** @typedef {'all-in-one' | 'engine'} Service */
/** @typedef {{ label: string, dist: string }} Tree */
/** @typedef {{ wallMs: number, cpuMs: number }} Start */

/**
 * Starts `service` of `tree` on a new data dir and stops it once it serves.
 * @param {Tree} tree @param {Service} service @returns {Promise<Start>}
 */
async function timeStart(tree, service) {
  return withTempDir('workflow-bench-startup-', async (dataDir) => {
    const started = performance.now()
    const running = service === 'engine' ? await startEngine(tree, dataDir) : await startAllInOne({ dataDir, dist: tree.dist })
    const wallMs = performance.now() - started
    const cpuMs = serviceCpuMs(running.pid) ?? NaN
    await running.stop()
    return { wallMs, cpuMs }
  })
}

/** The engine alone, as `npm run start:engine` starts it. @param {Tree} tree @param {string} dataDir */
async function startEngine(tree, dataDir) {
  const port = await freePort()
  return startProcess({
    args: [join(tree.dist, 'services', 'engine', 'server.js')],
    env: { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ENGINE_PORT: String(port) },
    ready: [`http://127.0.0.1:${port}/liveness`],
  })
}

await runBench(async () => {
  requireBuild('services/all-in-one.js')
  /** @type {Tree[]} */
  const trees = [{ label: 'this tree', dist: DIST }]
  if (BASELINE_REF) trees.push({ label: BASELINE_REF, dist: builtTree(BASELINE_REF).dist })
  /** @type {Service[]} */
  const services = ['all-in-one', 'engine']
  /** @type {Map<string, Start[]>} */
  const starts = new Map()
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? trees : [...trees].reverse()
    for (const service of services)
      for (const tree of order) {
        const key = `${tree.label}\0${service}`
        starts.set(key, [...(starts.get(key) ?? []), await timeStart(tree, service)])
      }
  }
  /** @param {Tree} tree @param {Service} service */
  const medians = (tree, service) => {
    const of = starts.get(`${tree.label}\0${service}`) ?? []
    return { wallMs: median(of.map((start) => start.wallMs)), cpuMs: median(of.map((start) => start.cpuMs)) }
  }
  process.stdout.write(`start to serving, empty embedded store, median of ${ROUNDS}:\n`)
  for (const service of services)
    for (const tree of trees) {
      const { wallMs, cpuMs } = medians(tree, service)
      process.stdout.write(
        `  ${service.padEnd(10)} ${tree.label.padEnd(12)} ${wallMs.toFixed(0).padStart(5)} ms, CPU ${cpuMs.toFixed(0)} ms\n`,
      )
    }
  /** @type {Array<[string, boolean]>} */
  const targets = services.map((service) => {
    const { wallMs } = medians(trees[0], service)
    return [`${service} serving in ${wallMs.toFixed(0)} ms (target < ${TARGET_MS[service]} ms)`, wallMs < TARGET_MS[service]]
  })
  const baseline = trees[1]
  if (baseline)
    for (const service of services) {
      const ratio = medians(trees[0], service).cpuMs / medians(baseline, service).cpuMs
      targets.push([`${service} CPU to serving ${ratio.toFixed(2)}× ${baseline.label}'s (target ≤ 1)`, ratio <= 1])
    }
  return reportTargets(targets)
})
