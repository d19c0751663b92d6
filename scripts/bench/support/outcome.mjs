// @ts-check
/**
 * How a bench ends. Only targets decide its exit code: 0 when every one is met, MISSED (1) when one
 * is missed, COULD_NOT_MEASURE (2) when the bench failed before it could tell. Informational figures
 * are printed and never fail it.
 */

export const MISSED = 1
export const COULD_NOT_MEASURE = 2

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
  let code = COULD_NOT_MEASURE
  try {
    code = (await body()) ? 0 : MISSED
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`)
  }
  process.exit(code)
}
