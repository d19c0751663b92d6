// @ts-check
/**
 * How a bench ends. Only targets decide its exit code: 0 when every one is met, MISSED (1) when one
 * is missed, COULD_NOT_MEASURE (2) when the bench failed before it could tell. Informational figures
 * are printed and never fail it.
 *
 * Every bench prints the machine's load average as it starts and as it ends, and warns when the
 * machine was not quiet at the start: its figures then count for nothing
 * (docs/performance.md, its opening paragraph).
 */
import { loadavg } from 'node:os'

export const MISSED = 1
export const COULD_NOT_MEASURE = 2

/** A 1-minute load average at or above this, on the machine's two cores, means something else was running. */
export const QUIET_LOAD = 1

/** The 1-, 5- and 15-minute load averages, as `uptime` prints them. */
export function loadAverage() {
  return loadavg()
    .map((value) => value.toFixed(2))
    .join(' ')
}

/**
 * Prints one line per target and whether it was met.
 * @param {Array<[label: string, met: boolean]>} targets
 * @returns {boolean} every target met
 */
export function reportTargets(targets) {
  for (const [label, met] of targets) process.stdout.write(`  ${met ? 'met   ' : 'MISSED'}  ${label}\n`)
  return targets.every(([, met]) => met)
}

/**
 * Runs a bench's body and exits with its verdict: 0 when it returns true (every target met), MISSED
 * when it returns false, COULD_NOT_MEASURE when it throws.
 * @param {() => Promise<boolean>} body
 */
export async function runBench(body) {
  const [startingLoad = 0] = loadavg()
  process.stdout.write(`load average at the start: ${loadAverage()}\n`)
  if (startingLoad >= QUIET_LOAD)
    process.stdout.write(`  WARNING: the machine is not quiet (1-minute load ${startingLoad.toFixed(2)}): these figures do not count\n`)
  let code = COULD_NOT_MEASURE
  try {
    code = (await body()) ? 0 : MISSED
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  }
  process.stdout.write(`load average at the end: ${loadAverage()}\n`)
  process.exit(code)
}
