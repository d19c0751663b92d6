// @ts-check
/**
 * The load of the lifecycle benches (lifecycle.mjs, scale.mjs): leave requests run whole through the
 * gateway — start (`POST /context`), submit (`POST /action/complete` by the employee), approve
 * (`POST /action/complete` by a manager) — by one client per pair of users, for a fixed time.
 */
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { Pool } from 'undici'
import { ROOT } from './dist.mjs'
import { timedGet, timedPost } from './http.mjs'
import { serviceCpuMs } from './proc.mjs'
import { percentile } from './stats.mjs'

export const TENANT = { appId: 'hr', organizationId: 'acme' }
/**
 * Lifecycles started in the first seconds of a run warm the service up and are not counted
 * (BENCH_WARMUP_S, 15 by default). V8 keeps compiling the service's hot code for about the first ten
 * seconds of load, which on the 2-core VM takes a core's worth of its compiler threads: a shorter
 * warm-up measured that compiling as well (docs/performance.md#warm-up).
 */
export const WARMUP_MS = Number(process.env.BENCH_WARMUP_S ?? 15) * 1000

/** @typedef {{ employee: string, manager: string }} Pair */
/** @typedef {{ label: string, dist: string }} Tree A tree's build: this one's or a baseline's (baseline.mjs). */

/**
 * Seeds the store in `dataDir` with the code of `tree` (support/seed-lifecycle.mjs, run on that
 * tree's build, so a baseline writes its own format): the models, and an employee and a manager per client.
 * @param {Tree} tree @param {string} dataDir @param {number} clients @returns {Pair[]}
 */
export function seedApp(tree, dataDir, clients) {
  const seeder = join(ROOT, 'scripts', 'bench', 'support', 'seed-lifecycle.mjs')
  const output = execFileSync(process.execPath, [seeder, tree.dist, dataDir, String(clients), JSON.stringify(TENANT)], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  })
  return JSON.parse(output)
}

/**
 * An answer with its payload: a gateway answer's out of the envelope, an engine answer as it came.
 * @param {{ status: number, text: string, ms: number }} answer
 * @returns {{ status: number, body: any, ms: number, text: string }}
 */
function withPayload(answer) {
  const parsed = JSON.parse(answer.text)
  const payload =
    parsed && typeof parsed === 'object' && 'status' in parsed && 'data' in parsed && !('context' in parsed) ? parsed.data : parsed
  return { ...answer, body: payload }
}

/**
 * A client of the service at `origin`; gateway answers come in the envelope, engine answers raw.
 * @param {string} origin @param {number} [connections]
 */
export function clientFor(origin, connections = 1) {
  const pool = new Pool(origin, { connections, pipelining: 1 })
  return {
    pool,
    /** @param {string} path @param {string} user @param {object} body */
    async post(path, user, body) {
      return withPayload(await timedPost(pool, path, user, body))
    },
    /** @param {string} path @param {string} user */
    async get(path, user) {
      return withPayload(await timedGet(pool, path, user))
    },
  }
}

/**
 * Where lifecycles are sent: the gateway when it proxies `/context`, else the engine (said so); the
 * engine when BENCH_VIA=engine asks for it (lifecycle.mjs).
 */
/** @param {{ gateway: string, engine: string }} service @param {Pair} pair */
export async function chooseTarget(service, pair) {
  if (process.env.BENCH_VIA === 'engine') return { origin: service.engine, via: 'engine' }
  const probe = clientFor(service.gateway)
  const answer = await probe.post('/context', pair.employee, { ...TENANT, processId: 'leave-request', input: { days: 3 } })
  await probe.pool.close()
  if (answer.status === 200) return { origin: service.gateway, via: 'gateway' }
  process.stdout.write(`  the gateway does not serve /context yet (${answer.status}): measuring against the engine directly\n`)
  return { origin: service.engine, via: 'engine' }
}

/** @param {ReturnType<typeof clientFor>} client @param {Pair} pair @returns {Promise<number[]>} */
export async function lifecycle(client, pair) {
  /** @type {number[]} */
  const latencies = []
  /** @param {string} path @param {string} user @param {object} body */
  const step = async (path, user, body) => {
    const answer = await client.post(path, user, body)
    latencies.push(answer.ms)
    if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${answer.text.slice(0, 300)}`)
    return answer.body
  }
  const started = await step('/context', pair.employee, { ...TENANT, processId: 'leave-request', input: { days: 3, reason: 'Benchmark' } })
  const instance = started.context.processInstance
  const ids = { ...TENANT, processId: 'leave-request', processInstanceId: instance.processInstanceId, businessKey: instance.businessKey }
  const submitted = await step('/action/complete', pair.employee, {
    ...ids,
    taskId: started.formContext.task.taskId,
    actionType: 'complete',
    dataInstance: { days: 3, reason: 'Benchmark' },
  })
  const approve = submitted.formContext.task
  const approved = await step('/action/complete', pair.manager, {
    ...ids,
    taskId: approve.taskId,
    actionType: 'complete',
    dataInstance: submitted.context.dataInstance,
  })
  if (approved.context.processInstance.processStatus !== 'completed')
    throw new Error(`the lifecycle ended ${approved.context.processInstance.processStatus}`)
  return latencies
}

/**
 * One loop of lifecycles per pair for `warmupMs` (WARMUP_MS unless said) + `durationMs`; only the
 * time after the warm-up counts. The service's CPU time is read as the measured window begins and
 * ends: CPU per lifecycle tells what the service spends on one far more steadily than throughput on
 * a shared host. A `client` given (clientFor) is used and left open, for a caller that measures the
 * same service again.
 * @param {string} origin @param {Pair[]} pairs @param {number} pid @param {number} durationMs
 * @param {{ warmupMs?: number, client?: ReturnType<typeof clientFor> }} [options]
 */
export async function measure(origin, pairs, pid, durationMs, { warmupMs = WARMUP_MS, client: given } = {}) {
  const client = given ?? clientFor(origin, pairs.length)
  const begin = performance.now()
  const measuredFrom = begin + warmupMs
  const end = measuredFrom + durationMs
  /** @type {number[]} */
  const latencies = []
  let lifecycles = 0
  let errors = 0
  /** @type {Error | undefined} */
  let firstError
  /** @type {number | undefined} */
  let cpuAtStart
  // Without a warm-up the window opens now, before the first request.
  if (warmupMs === 0) cpuAtStart = serviceCpuMs(pid)
  const startCpuClock = warmupMs === 0 ? undefined : setTimeout(() => (cpuAtStart = serviceCpuMs(pid)), warmupMs)
  await Promise.all(
    pairs.map(async (pair) => {
      while (performance.now() < end) {
        const started = performance.now()
        try {
          const times = await lifecycle(client, pair)
          if (started >= measuredFrom) {
            lifecycles++
            latencies.push(...times)
          }
        } catch (error) {
          errors++
          firstError ??= error instanceof Error ? error : new Error(String(error))
        }
      }
    }),
  )
  const cpuAtEnd = serviceCpuMs(pid)
  clearTimeout(startCpuClock)
  if (!given) await client.pool.close()
  latencies.sort((a, b) => a - b)
  const cpuMs = cpuAtStart === undefined || cpuAtEnd === undefined ? undefined : cpuAtEnd - cpuAtStart
  return summary({ cpuMs, lifecycles, durationMs, latencies, errors, firstError })
}

/**
 * What a measured window (or several, summed: lifecycle.mjs's slices) gives: CPU and time per
 * lifecycle, and the latencies' percentiles (`latencies` sorted).
 * @param {{ cpuMs: number | undefined, lifecycles: number, durationMs: number, latencies: number[], errors: number,
 *   firstError: Error | undefined }} window
 */
export function summary({ cpuMs, lifecycles, durationMs, latencies, errors, firstError }) {
  return {
    cpuMsPerLifecycle: cpuMs === undefined || lifecycles === 0 ? undefined : cpuMs / lifecycles,
    lifecyclesPerSecond: lifecycles / (durationMs / 1000),
    requests: latencies.length,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    errors,
    firstError,
    window: { cpuMs, lifecycles, durationMs, latencies },
  }
}

/** @param {string} label @param {Awaited<ReturnType<typeof measure>>} result */
export function report(label, result) {
  process.stdout.write(
    `  ${label}: ${result.lifecyclesPerSecond.toFixed(1)} lifecycles/s, ${result.requests} requests, ` +
      `p50 ${result.p50.toFixed(2)} ms, p99 ${result.p99.toFixed(2)} ms, ` +
      `${result.cpuMsPerLifecycle === undefined ? '' : `service CPU ${result.cpuMsPerLifecycle.toFixed(2)} ms/lifecycle, `}` +
      `${result.errors} failed lifecycles\n`,
  )
  if (result.firstError) process.stdout.write(`    first failure: ${result.firstError.message}\n`)
}
