#!/usr/bin/env node
// @ts-check
/**
 * Runs every compiled test file with tap and ends with one plain line `N passed, N failed`
 * (N skipped when any), counting the named tests of each file (the `t.test(...)` calls at its top
 * level); a file that crashes outside any test counts as one failure. Exit code is tap's.
 * Extra arguments are passed to tap (e.g. a subset of files).
 */
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

const args = process.argv.slice(2)
const options = args.filter((arg) => arg.startsWith('-'))
const paths = args.filter((arg) => !arg.startsWith('-'))
// A folder means the test files under it, never the other modules it holds.
const files = paths.length === 0 ? ['dist/**/*.test.js'] : paths.map((path) => (path.endsWith('.js') ? path : `${path.replace(/\/$/, '')}/**/*.test.js`))
const tap = spawn('npx', ['tap', '--disable-coverage', '--reporter=tap', '--timeout=180', ...options, ...files], {
  stdio: ['ignore', 'pipe', 'inherit'],
  env: { ...process.env, FORCE_COLOR: '0' },
})

let passed = 0
let failed = 0
let skipped = 0
let failuresInFile = 0
/** @type {string[]} */
const failures = []

const lines = createInterface({ input: /** @type {import('node:stream').Readable} */ (tap.stdout) })
lines.on('line', (line) => {
  process.stdout.write(line + '\n')
  const topLevel = /^ {4}(not ok|ok) \d+ - (.*)$/.exec(line)
  if (topLevel) {
    const [, result, name] = topLevel
    if (/# (SKIP|TODO)\b/i.test(name)) skipped++
    else if (result === 'ok') passed++
    else {
      failed++
      failuresInFile++
      failures.push(name)
    }
    return
  }
  const file = /^(not ok|ok) \d+ - (.*)$/.exec(line)
  if (file) {
    if (file[1] === 'not ok' && failuresInFile === 0) {
      failed++
      failures.push(file[2])
    }
    failuresInFile = 0
  }
})

tap.on('close', (code) => {
  if (failures.length > 0) process.stdout.write(`\nFailed:\n${failures.map((name) => `  - ${name}`).join('\n')}\n`)
  process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`)
  process.exit(code ?? 1)
})
