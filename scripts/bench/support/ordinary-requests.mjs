// @ts-check
/** The ordinary requests of a tenant whose latency the isolation benches measure while another tenant attacks. */
import { timedPost as post } from './http.mjs'

/**
 * A standalone function run and a process start of the example models, one after the other; their latencies.
 * @param {import('undici').Pool} pool @param {string} user @param {{ appId: string, organizationId: string }} tenant
 */
export async function ordinaryRequests(pool, user, tenant) {
  const run = await post(pool, '/external/function/vatOf/execute', user, { ...tenant, inputParams: { amount: 100 } })
  const start = await post(pool, '/process/start', user, { ...tenant, processId: 'leave-request', input: { days: 2 } })
  for (const answer of [run, start])
    if (answer.status !== 200) throw new Error(`an ordinary request failed: ${answer.status} ${answer.text.slice(0, 200)}`)
  return [run.ms, start.ms]
}
