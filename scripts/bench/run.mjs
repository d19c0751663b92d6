#!/usr/bin/env node
// @ts-check
/**
 * `make bench`: runs every benchmark in this folder (each `*.mjs` but this runner), one after the
 * other, each in its own process. Exit code 1 when any of them failed to run or missed a target.
 */
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
const benches = readdirSync(here).filter((name) => name.endsWith('.mjs') && name !== 'run.mjs').sort()
let failed = 0
for (const bench of benches) {
  process.stdout.write(`\n== ${bench}\n`)
  const result = spawnSync(process.execPath, [join(here, bench), ...process.argv.slice(2)], { stdio: 'inherit' })
  if (result.status !== 0) failed++
}
process.stdout.write(`\n${benches.length - failed} of ${benches.length} benchmarks met their targets\n`)
process.exit(failed === 0 ? 0 : 1)
