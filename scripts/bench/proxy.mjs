#!/usr/bin/env node
// @ts-check
/**
 * What the gateway's proxy costs: the engine and the gateway run as separate processes (the
 * commands of `npm run start:engine` and `npm run start:gateway`, each on its own temporary data
 * dir, the gateway's ENGINE_URL pointing at the engine), one leave request is started in the engine,
 * and autocannon sends the same `GET /process/:processInstanceId` straight at the engine and through
 * the gateway, alternating for several rounds.
 *
 * Targets (issue 7): the gateway keeps at least 0.8 of the engine's throughput, and adds under 2 ms
 * at p99 (medians over the rounds). Exit code 1 when a target is missed or requests fail.
 *
 * Fairness: both sides get the same autocannon settings (connections, no pipelining, headers), both
 * are warmed up, and the side that goes first alternates from round to round, so that a drift in the
 * host's load (it is shared) does not always favour the same side. Each process's CPU time per
 * request is reported too (median over the rounds): on a busy host it is the figure that moves with
 * the code, where throughput moves with the neighbours. The load average is printed for the same
 * reason.
 *
 * Baseline (BENCH_PROXY_BASELINE=1): a third side, a bare Fastify + @fastify/http-proxy passthrough
 * with the library's defaults (support/passthrough-proxy.mjs) in front of the same engine, measured
 * in every round like the gateway: the floor that the library chain alone sets, against which the
 * gateway's own cost can be read.
 *
 * Socket (BENCH_PROXY_SOCKET=1): the engine also listens on a Unix socket and the gateway reaches it
 * there (ENGINE_SOCKET), as one host's deployment would; the clients still use TCP.
 *
 * Environment: BENCH_PROXY_ROUNDS (default 5), BENCH_PROXY_DURATION_S (5, per side and round),
 * BENCH_PROXY_CONNECTIONS (10), BENCH_PROXY_BASELINE (unset), BENCH_PROXY_SOCKET (unset). Everything
 * runs on 127.0.0.1; the data dirs are removed at the end.
 */
import { spawn } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { loadavg, tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { freePort } from './support/free-port.mjs'
import autocannon from 'autocannon'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..')
const DIST = join(ROOT, 'dist')
if (!existsSync(join(DIST, 'services', 'engine', 'server.js'))) {
  process.stderr.write('Build first: npx tsc -p . (make bench does)\n')
  process.exit(1)
}
const { openStore } = await import(join(DIST, 'store/open.js'))
const { deployExample } = await import(join(DIST, 'services/testing/models.js'))
const { createTestUser } = await import(join(DIST, 'services/testing/users.js'))

const ROUNDS = Number(process.env.BENCH_PROXY_ROUNDS ?? 5)
const DURATION_S = Number(process.env.BENCH_PROXY_DURATION_S ?? 5)
const CONNECTIONS = Number(process.env.BENCH_PROXY_CONNECTIONS ?? 10)
const BASELINE = process.env.BENCH_PROXY_BASELINE === '1'
const SOCKET = process.env.BENCH_PROXY_SOCKET === '1'
const WARMUP_S = 2
const TARGET = { throughputRatio: 0.8, addedP99Ms: 2 }
const TENANT = { appId: 'hr', organizationId: 'acme' }


/**
 * The entry point an npm script runs (`node dist/services/engine/server.js`), started directly so
 * that stopping it is one signal to one process.
 * @param {'start:engine' | 'start:gateway'} script
 */
function entryOf(script) {
  const scripts = /** @type {{ scripts: Record<string, string> }} */ (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))).scripts
  const match = /^node (\S+)$/.exec(scripts[script] ?? '')
  if (!match?.[1]) throw new Error(`package.json's ${script} is not "node <file>": ${scripts[script]}`)
  return join(ROOT, match[1])
}

/**
 * Starts one service as its npm script would (or the baseline passthrough, a file); resolves once it
 * answers `/liveness`.
 * @param {'start:engine' | 'start:gateway' | { file: string }} script @param {Record<string, string>} env
 */
async function startProcess(script, env) {
  const entry = typeof script === 'string' ? entryOf(script) : script.file
  const child = spawn(process.execPath, [entry], { env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'warn', HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'inherit', 'inherit'] })
  const exited = new Promise((resolveExit) => child.once('exit', resolveExit))
  const port = script === 'start:engine' ? env.ENGINE_PORT : env.GATEWAY_PORT
  const origin = `http://127.0.0.1:${port}`
  const deadline = Date.now() + 60_000
  for (;;) {
    try {
      if ((await fetch(`${origin}/liveness`)).ok) break
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null) throw new Error(`${entry} exited (${child.exitCode}) before answering`)
    if (Date.now() > deadline) throw new Error(`${entry} did not answer within 60 s`)
    await new Promise((wait) => setTimeout(wait, 100))
  }
  return {
    origin,
    pid: /** @type {number} */ (child.pid),
    stop: async () => {
      child.kill('SIGTERM')
      await exited
    },
  }
}

/**
 * CPU time (user + system, ms) a process has used so far, from /proc (Linux); undefined elsewhere.
 * It tells what one request costs each process, which the throughput ratio alone hides on a host
 * whose cores are all busy.
 * @param {number} pid
 */
function cpuMsOf(pid) {
  const stat = `/proc/${pid}/stat`
  if (!existsSync(stat)) return undefined
  // Fields after the parenthesised command name: state is field 3, utime 14, stime 15 (clock ticks of 10 ms).
  const line = readFileSync(stat, 'utf8')
  const fields = line.slice(line.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10
}

/** The HR app and one employee in the engine's store, written before the engine starts. @param {string} dataDir */
async function seedEngineStore(dataDir) {
  const store = await openStore({ dataDir })
  try {
    for (const example of ['leave-request', 'leave-form', 'hr-constants', 'hr-lib', 'leave-bookings']) await deployExample(store, example, TENANT)
    const employee = await createTestUser(store, { ...TENANT, fullName: 'Bench Employee', swimlanes: ['employee'] })
    return /** @type {string} */ (employee.userId)
  } finally {
    await store.close()
  }
}

/**
 * One leave request started through the engine's own `POST /context`: the instance the benchmark reads.
 * @param {string} engine @param {string} userId
 */
async function startInstance(engine, userId) {
  const response = await fetch(`${engine}/context`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', user: userId },
    body: JSON.stringify({ ...TENANT, processId: 'leave-request', input: { days: 3, reason: 'Benchmark' } }),
  })
  const session = /** @type {{ context?: { processInstance?: { processInstanceId?: string } } }} */ (await response.json())
  const id = session.context?.processInstance?.processInstanceId
  if (!response.ok || !id) throw new Error(`the engine did not start a leave request: ${response.status} ${JSON.stringify(session)}`)
  return id
}

/**
 * @param {string} url @param {string} userId @param {number} seconds
 * @param {Record<string, number>} pids the processes whose CPU time per request is measured, by name
 * @returns {Promise<{ requestsPerSecond: number, p99Ms: number, p50Ms: number, errors: number, cpuUsPerRequest: Record<string, number | undefined> }>}
 */
async function load(url, userId, seconds, pids) {
  const before = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, cpuMsOf(pid)]))
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, headers: { user: userId } })
  const cpuUsPerRequest = Object.fromEntries(
    Object.entries(pids).map(([name, pid]) => {
      const [start, end] = [before[name], cpuMsOf(pid)]
      return [name, start === undefined || end === undefined || result.requests.total === 0 ? undefined : ((end - start) * 1000) / result.requests.total]
    }),
  )
  const failures = result.errors + result.timeouts + result.non2xx
  return { requestsPerSecond: result.requests.average, p99Ms: result.latency.p99, p50Ms: result.latency.p50, errors: failures, cpuUsPerRequest }
}

/** @param {number | undefined} value */
function micros(value) {
  return value === undefined || Number.isNaN(value) ? '?' : `${value.toFixed(0)} µs`
}

function loadAverage() {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
}

/** @param {number[]} values */
function median(values) {
  const sorted = [...values].sort((a, b) => a - b)
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? /** @type {number} */ (sorted[middle]) : (/** @type {number} */ (sorted[middle - 1]) + /** @type {number} */ (sorted[middle])) / 2
}

const engineDir = mkdtempSync(join(tmpdir(), 'bench-proxy-engine-'))
const gatewayDir = mkdtempSync(join(tmpdir(), 'bench-proxy-gateway-'))
/** @type {Array<{ stop: () => Promise<void> }>} */
const running = []
let exitCode = 0
try {
  const userId = await seedEngineStore(engineDir)
  const enginePort = String(await freePort())
  /** @type {Record<string, string>} */
  const socket = SOCKET ? { ENGINE_SOCKET: join(engineDir, 'engine.sock') } : {}
  const engine = await startProcess('start:engine', { DATA_DIR: engineDir, ENGINE_PORT: enginePort, ...socket })
  running.push(engine)
  const gateway = await startProcess('start:gateway', { DATA_DIR: gatewayDir, GATEWAY_PORT: String(await freePort()), ENGINE_URL: engine.origin, ...socket })
  running.push(gateway)
  const passthrough = BASELINE ? await startProcess({ file: join(ROOT, 'scripts/bench/support/passthrough-proxy.mjs') }, { GATEWAY_PORT: String(await freePort()), ENGINE_URL: engine.origin }) : undefined
  if (passthrough) running.push(passthrough)
  const processInstanceId = await startInstance(engine.origin, userId)
  const path = `/process/${processInstanceId}?organizationId=${TENANT.organizationId}&appId=${TENANT.appId}`
  process.stdout.write(
    `GET /process/:id, ${CONNECTIONS} connections, ${ROUNDS} rounds of ${DURATION_S} s per side, gateway -> engine over ${SOCKET ? 'a Unix socket' : 'TCP'}; load average ${loadAverage()}\n`,
  )

  const pids = { engine: engine.pid, gateway: gateway.pid, ...(passthrough ? { passthrough: passthrough.pid } : {}) }
  const direct = () => load(`${engine.origin}${path}`, userId, DURATION_S, pids)
  const proxied = () => load(`${gateway.origin}${path}`, userId, DURATION_S, pids)
  await load(`${engine.origin}${path}`, userId, WARMUP_S, pids)
  await load(`${gateway.origin}${path}`, userId, WARMUP_S, pids)
  if (passthrough) await load(`${passthrough.origin}${path}`, userId, WARMUP_S, pids)
  /** @type {Array<{ ratio: number, addedP99Ms: number, engineAloneUs: number, gatewayUs: number, engineProxiedUs: number }>} */
  const rounds = []
  /** @type {Array<{ ratio: number, addedP99Ms: number, passthroughUs: number, engineProxiedUs: number }>} */
  const baselineRounds = []
  let errors = 0
  for (let round = 1; round <= ROUNDS; round++) {
    const engineFirst = round % 2 === 1
    const first = await (engineFirst ? direct() : proxied())
    const second = await (engineFirst ? proxied() : direct())
    const [straight, through] = engineFirst ? [first, second] : [second, first]
    errors += straight.errors + through.errors
    const ratio = through.requestsPerSecond / straight.requestsPerSecond
    const addedP99Ms = through.p99Ms - straight.p99Ms
    const cpu = { engineAloneUs: straight.cpuUsPerRequest.engine ?? NaN, gatewayUs: through.cpuUsPerRequest.gateway ?? NaN, engineProxiedUs: through.cpuUsPerRequest.engine ?? NaN }
    rounds.push({ ratio, addedP99Ms, ...cpu })
    process.stdout.write(
      `round ${round} (${engineFirst ? 'engine' : 'gateway'} first): engine ${straight.requestsPerSecond.toFixed(0)} req/s (p50 ${straight.p50Ms} ms, p99 ${straight.p99Ms} ms); ` +
        `gateway ${through.requestsPerSecond.toFixed(0)} req/s (p50 ${through.p50Ms} ms, p99 ${through.p99Ms} ms); ratio ${ratio.toFixed(3)}, added p99 ${addedP99Ms.toFixed(2)} ms; ` +
        `CPU per request: engine alone ${micros(cpu.engineAloneUs)}, through the gateway ${micros(cpu.gatewayUs)} gateway + ${micros(cpu.engineProxiedUs)} engine\n`,
    )
    if (passthrough) {
      // Measured right after the round's two sides, against the same round's engine figures.
      const bare = await load(`${passthrough.origin}${path}`, userId, DURATION_S, pids)
      errors += bare.errors
      const entry = { ratio: bare.requestsPerSecond / straight.requestsPerSecond, addedP99Ms: bare.p99Ms - straight.p99Ms, passthroughUs: bare.cpuUsPerRequest.passthrough ?? NaN, engineProxiedUs: bare.cpuUsPerRequest.engine ?? NaN }
      baselineRounds.push(entry)
      process.stdout.write(
        `  baseline passthrough ${bare.requestsPerSecond.toFixed(0)} req/s (p50 ${bare.p50Ms} ms, p99 ${bare.p99Ms} ms); ratio ${entry.ratio.toFixed(3)}; ` +
          `CPU per request ${micros(entry.passthroughUs)} passthrough + ${micros(entry.engineProxiedUs)} engine\n`,
      )
    }
  }
  const ratio = median(rounds.map((entry) => entry.ratio))
  const addedP99Ms = median(rounds.map((entry) => entry.addedP99Ms))
  const verdicts = [
    `throughput ratio ${ratio.toFixed(3)} (target >= ${TARGET.throughputRatio}): ${ratio >= TARGET.throughputRatio ? 'met' : 'MISSED'}`,
    `added p99 ${addedP99Ms.toFixed(2)} ms (target < ${TARGET.addedP99Ms} ms): ${addedP99Ms < TARGET.addedP99Ms ? 'met' : 'MISSED'}`,
    `failed requests: ${errors}`,
  ]
  process.stdout.write(`median over ${ROUNDS} rounds: ${verdicts.join('; ')}\n`)
  process.stdout.write(
    `median CPU per request: engine alone ${micros(median(rounds.map((entry) => entry.engineAloneUs)))}; through the gateway ` +
      `${micros(median(rounds.map((entry) => entry.gatewayUs)))} gateway + ${micros(median(rounds.map((entry) => entry.engineProxiedUs)))} engine; load average ${loadAverage()}\n`,
  )
  if (baselineRounds.length > 0) {
    process.stdout.write(
      `baseline (bare Fastify + @fastify/http-proxy, library defaults), medians: throughput ratio ${median(baselineRounds.map((entry) => entry.ratio)).toFixed(3)}, ` +
        `added p99 ${median(baselineRounds.map((entry) => entry.addedP99Ms)).toFixed(2)} ms; CPU per request ${micros(median(baselineRounds.map((entry) => entry.passthroughUs)))} passthrough + ` +
        `${micros(median(baselineRounds.map((entry) => entry.engineProxiedUs)))} engine\n`,
    )
  }
  if (ratio < TARGET.throughputRatio || addedP99Ms >= TARGET.addedP99Ms || errors > 0) exitCode = 1
} catch (error) {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  exitCode = 1
} finally {
  for (const service of running.reverse()) await service.stop()
  rmSync(engineDir, { recursive: true, force: true })
  rmSync(gatewayDir, { recursive: true, force: true })
}
process.exit(exitCode)
