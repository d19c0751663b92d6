// @ts-check
/**
 * How a bench ends. Only targets decide its exit code (1 when one is missed, or when the bench could
 * not measure at all); informational figures are printed and never fail it, so `make bench` fails
 * only for a missed target.
 */

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
 * Runs a bench's body and exits with its verdict: 0 when it returns true, 1 when it returns false or
 * throws (a bench that cannot measure cannot say its target was met).
 * @param {() => Promise<boolean>} body
 */
export async function runBench(body) {
  let met = false
  try {
    met = await body()
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  }
  process.exit(met ? 0 : 1)
}
