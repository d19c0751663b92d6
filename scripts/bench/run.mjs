#!/usr/bin/env node
// @ts-check
/**
 * `make bench`: runs every benchmark in this folder (each `*.mjs` but this runner), one after the
 * other, each in its own process, and sums up what each said of its targets (support/outcome.mjs).
 * Exit code 1 when a bench missed a target or could not measure (a target it cannot check is not
 * met); informational figures never fail it.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MISSED } from './support/outcome.mjs'

const here = dirname(fileURLToPath(import.meta.url))
const benches = readdirSync(here)
  .filter((name) => name.endsWith('.mjs') && name !== 'run.mjs')
  .sort()
/** @type {string[]} */
const missed = []
/** @type {string[]} */
const unmeasured = []
for (const bench of benches) {
  process.stdout.write(`\n== ${bench}\n`)
  const { status } = spawnSync(process.execPath, [join(here, bench), ...process.argv.slice(2)], { stdio: 'inherit' })
  if (status === MISSED) missed.push(bench)
  else if (status !== 0) unmeasured.push(`${bench} (exit ${status ?? 'by a signal'})`)
}
const met = benches.length - missed.length - unmeasured.length
process.stdout.write(`\n${met} of ${benches.length} benchmarks met their targets`)
if (missed.length > 0) process.stdout.write(`; missed a target: ${missed.join(', ')}`)
if (unmeasured.length > 0) process.stdout.write(`; could not measure: ${unmeasured.join(', ')}`)
process.stdout.write('\n')
process.exit(met === benches.length ? 0 : 1)
