#!/usr/bin/env node
// @ts-check
/**
 * The engine's cost per workflow request, without HTTP: leave-request lifecycles (start via
 * `POST /context`, submit, approve) routed in-process into an engine over a temporary embedded store,
 * `concurrency` of them at a time. Prints, after a warm-up quarter, the mean latency of each request
 * and the main thread's busy time per lifecycle (its event-loop utilisation): the figure that bounds
 * throughput, since the store's SQLite writes run on their own thread; and the CPU of every thread of
 * the process per lifecycle (the journal's, the checkpointer's and V8's too, and this script's own
 * encoding of the requests and parsing of the answers): what `scripts/bench/lifecycle.mjs` reads as
 * the service's CPU, without HTTP and without a load client on the same cores. Run it under
 * `node --cpu-prof` to see where the main thread's time goes.
 *
 * Usage: npx tsc -p . && node scripts/profile/engine-requests.mjs [lifecycles=1000] [concurrency=16]
 */
import { lifecycleEngine } from './support/in-process-lifecycles.mjs'

const LIFECYCLES = Number(process.argv[2] ?? 1000)
const CONCURRENCY = Number(process.argv[3] ?? 16)
const engine = await lifecycleEngine({ prefix: 'profile-engine-' })

const totals = { start: 0, submit: 0, approve: 0 }
const warmUp = Math.floor(LIFECYCLES / 4)
let measured = 0
/** @type {ReturnType<typeof performance.eventLoopUtilization> | undefined} */
let utilisationFrom
let measuredFrom = 0
/** @type {NodeJS.CpuUsage | undefined} */
let cpuFrom

await engine.run(
  LIFECYCLES,
  CONCURRENCY,
  (index, times) => {
    if (index < warmUp) return
    measured++
    totals.start += times.start
    totals.submit += times.submit
    totals.approve += times.approve
  },
  (index) => {
    if (index !== warmUp) return
    utilisationFrom = performance.eventLoopUtilization()
    cpuFrom = process.cpuUsage()
    measuredFrom = performance.now()
  },
)
const busy = performance.eventLoopUtilization(utilisationFrom)
const cpu = process.cpuUsage(cpuFrom)
const seconds = (performance.now() - measuredFrom) / 1000
process.stdout.write(
  `${measured} lifecycles, ${CONCURRENCY} at a time: ${(measured / seconds).toFixed(0)} lifecycles/s; main thread busy ` +
    `${(busy.active / measured).toFixed(2)} ms per lifecycle ` +
    `(utilisation ${(busy.utilization * 100).toFixed(0)}%), every thread ${((cpu.user + cpu.system) / 1000 / measured).toFixed(2)} ms ` +
    `per lifecycle; mean latency ${Object.entries(totals)
      .map(([name, ms]) => `${name} ${(ms / measured).toFixed(2)} ms`)
      .join(', ')}\n`,
)
await engine.close()
