// @ts-check
/** Where the repository and its build are, for the scripts that run the built code. */
import { existsSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { COULD_NOT_MEASURE } from './outcome.mjs'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..')
export const DIST = join(ROOT, 'dist')

/**
 * Ends the process with a hint when the build is missing, so a bench never measures stale or absent
 * code by surprise.
 * @param {string} file a file below dist/ the caller runs
 */
export function requireBuild(file) {
  if (existsSync(join(DIST, file))) return
  process.stderr.write(`dist/${file} is missing. Build first: npx tsc -p . (make bench does)\n`)
  process.exit(COULD_NOT_MEASURE)
}

/**
 * A module of the build, checked for first.
 * @param {string} file its path below dist/
 * @returns {Promise<any>}
 */
export async function importBuilt(file) {
  requireBuild(file)
  return import(join(DIST, file))
}
