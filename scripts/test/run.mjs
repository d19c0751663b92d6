#!/usr/bin/env node
// @ts-check
/**
 * Runs every compiled test file and ends with one plain line `N passed, N failed` (N skipped when
 * any), counting the named tests of each file (the `t.test(...)` calls at its top level); a file
 * that crashes outside any test, or outlives the time limit, counts as one failure.
 *
 * Each file is a plain Node program (the tests are compiled JavaScript and use no mocking loader),
 * so it runs under `node` directly: tap's runner would load its TypeScript and coverage hooks into
 * every file's process first, which cost about four seconds a file, a third of the whole suite.
 *
 * Arguments: test files or folders (default: every `*.test.js` under dist/), `--jobs=N` (default:
 * the cores available), `--timeout=S` seconds per file (default 180). Exit code 1 on any failure.
 * A file that needs longer says so in its first line, `// test-timeout-seconds: S` (the larger wins).
 */
import { spawn } from 'node:child_process'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { availableParallelism } from 'node:os'
import path from 'node:path'

const args = process.argv.slice(2)
const option = (/** @type {string} */ name, /** @type {number} */ fallback) => {
  const given = args.find((arg) => arg.startsWith(`--${name}=`))
  return given ? Number(given.slice(name.length + 3)) : fallback
}
const jobs = option('jobs', availableParallelism())
const timeoutMs = option('timeout', 180) * 1000
const paths = args.filter((arg) => !arg.startsWith('-'))

/** @param {string} target @returns {string[]} */
function testFiles(target) {
  if (statSync(target).isFile()) return [target]
  return readdirSync(target, { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.js'))
    .map((name) => path.join(target, name))
    .sort()
}

const files = (paths.length === 0 ? ['dist'] : paths).flatMap(testFiles)

let passed = 0
let failed = 0
let skipped = 0
/** @type {string[]} */
const failures = []
let fileNumber = 0

/**
 * Counts the file's top-level results and prints its output as a subtest of the run.
 * @param {string} file @param {string} output @param {number | null} code @param {number} ms
 * @param {number | undefined} timedOutAfterMs the time limit the file outlived, if it did
 */
function report(file, output, code, timedOutAfterMs, ms) {
  let failuresInFile = 0
  for (const line of output.split('\n')) {
    const result = /^(not ok|ok) \d+ - (.*)$/.exec(line)
    if (!result) continue
    const [, outcome, name] = result
    if (/# (SKIP|TODO)\b/i.test(name)) skipped++
    else if (outcome === 'ok') passed++
    else {
      failed++
      failuresInFile++
      failures.push(name)
    }
  }
  const fileFailed = code !== 0 || timedOutAfterMs !== undefined
  if (fileFailed && failuresInFile === 0) {
    failed++
    failures.push(timedOutAfterMs !== undefined ? `${file} (over the ${timedOutAfterMs / 1000} s limit)` : file)
  }
  const indented = output
    .trimEnd()
    .split('\n')
    .map((line) => `    ${line}`)
    .join('\n')
  fileNumber++
  process.stdout.write(`# Subtest: ${file}\n${indented}\n${fileFailed ? 'not ok' : 'ok'} ${fileNumber} - ${file} # time=${ms}ms\n\n`)
}

/** The file's own time limit (its first line), when it needs more than `--timeout`. @param {string} file */
function timeoutOf(file) {
  const own = /^\/\/ test-timeout-seconds: (\d+)$/m.exec(readFileSync(file, 'utf8').slice(0, 200))
  return Math.max(timeoutMs, own ? Number(own[1]) * 1000 : 0)
}

/** @param {string} file @returns {Promise<void>} */
function run(file) {
  return new Promise((resolve) => {
    const started = Date.now()
    const fileTimeoutMs = timeoutOf(file)
    const child = spawn(process.execPath, ['--enable-source-maps', file], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, FORCE_COLOR: '0', TAP_TIMEOUT: String(fileTimeoutMs / 1000) },
    })
    let output = ''
    child.stdout.on('data', (chunk) => (output += chunk))
    child.stderr.on('data', (chunk) => (output += chunk))
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill('SIGKILL')
    }, fileTimeoutMs)
    child.on('close', (code) => {
      clearTimeout(timer)
      report(file, output, code, timedOut ? fileTimeoutMs : undefined, Date.now() - started)
      resolve()
    })
  })
}

process.stdout.write(`TAP version 14\n`)
// Files that ask for a longer time limit start first, so the longest file does not begin last and
// hold the run open alone while the other jobs sit idle.
const queue = [...files].sort((a, b) => timeoutOf(b) - timeoutOf(a))
await Promise.all(
  Array.from({ length: Math.min(jobs, queue.length) }, async () => {
    for (let file = queue.shift(); file !== undefined; file = queue.shift()) await run(file)
  }),
)
process.stdout.write(`1..${fileNumber}\n`)
if (failures.length > 0) process.stdout.write(`\nFailed:\n${failures.map((name) => `  - ${name}`).join('\n')}\n`)
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`)
process.exitCode = failed > 0 ? 1 : 0
