#!/usr/bin/env node
// @ts-check
/**
 * The all-in-one's system calls per lifecycle, thread by thread: leave-request lifecycles through its
 * gateway, as `scripts/bench/lifecycle.mjs` runs them (32 clients on a store seeded for them), with
 * `strace` attached to every thread of the service for a window of the load. The main thread is the
 * one whose id is the process's; the journal's thread is the one writing the write-ahead log
 * (`pwrite64` by the tens per lifecycle), the checkpointer's the one reading it back (`pread64`) and
 * syncing the database file (`fsync`).
 *
 * Tracing slows the service several times over, so the journal's commits group fewer writes than
 * without it: the counts of the journal's and the checkpointer's threads are upper bounds.
 *
 * Usage: npx tsc -p . && node scripts/profile/system-calls.mjs [seconds=5]
 * Environment: BENCH_WARMUP_S (5), BENCH_CLIENTS (32). Needs `strace` on PATH (Debian's `strace`);
 * exits 2 without it.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clientFor, lifecycle, seedApp } from '../bench/support/lifecycle-load.mjs'
import { DIST } from '../bench/support/dist.mjs'
import { startAllInOne } from '../bench/support/process.mjs'
import { withTempDir } from '../bench/support/store.mjs'

const WINDOW_MS = Number(process.argv[2] ?? 5) * 1000
const WARMUP_MS = Number(process.env.BENCH_WARMUP_S ?? 5) * 1000
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32)
/** Syscalls shown per thread, the most frequent first. */
const SHOWN = 8

if (spawnSync('strace', ['-V']).status !== 0) {
  process.stderr.write('system-calls.mjs needs strace on PATH (apt-get install strace)\n')
  process.exit(2)
}

const sleep = (/** @type {number} */ ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The calls in one thread's trace by name. A call another thread interrupted is written twice
 * (`name(… <unfinished …>` and `<… name resumed>`): only its first line counts.
 * @param {string} file
 */
function callsIn(file) {
  /** @type {Map<string, number>} */
  const calls = new Map()
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const name = /^([a-z_0-9]+)\(/.exec(line)?.[1]
    if (name) calls.set(name, (calls.get(name) ?? 0) + 1)
  }
  return calls
}

await withTempDir('profile-syscalls-', async (dataDir) => {
  const pairs = seedApp({ label: 'this tree', dist: DIST }, dataDir, CLIENTS)
  const service = await startAllInOne({ dataDir })
  const traces = mkdtempSync(join(tmpdir(), 'profile-syscalls-trace-'))
  try {
    const client = clientFor(service.gateway, pairs.length)
    let tracing = false
    let stopped = false
    let lifecycles = 0
    const load = Promise.all(
      pairs.map(async (pair) => {
        while (!stopped) {
          const startedWhileTracing = tracing
          await lifecycle(client, pair)
          if (startedWhileTracing && tracing) lifecycles++
        }
      }),
    )
    await sleep(WARMUP_MS)
    // -ff: a file per thread, named by its id; -qq: no attach and detach lines.
    const strace = spawn('strace', ['-f', '-ff', '-qq', '-o', join(traces, 'trace'), '-p', String(service.pid)], { stdio: 'ignore' })
    const exited = new Promise((resolve) => strace.once('exit', resolve))
    // Attaching to every thread takes a moment; the window starts after it.
    await sleep(500)
    tracing = true
    await sleep(WINDOW_MS)
    tracing = false
    strace.kill('SIGINT')
    await exited
    stopped = true
    await load
    await client.pool.close()

    process.stdout.write(`${lifecycles} lifecycles through the gateway in ${WINDOW_MS / 1000} s under strace\n`)
    const threads = readdirSync(traces).map((file) => ({ tid: Number(file.split('.').pop()), calls: callsIn(join(traces, file)) }))
    const total = (/** @type {Map<string, number>} */ calls) => [...calls.values()].reduce((sum, n) => sum + n, 0)
    threads.sort((a, b) => total(b.calls) - total(a.calls))
    const perLifecycle = (/** @type {number} */ n) => (n / lifecycles).toFixed(2)
    for (const { tid, calls } of threads.filter((thread) => total(thread.calls) > 0)) {
      const label = tid === service.pid ? 'main thread' : `thread ${tid}`
      const shown = [...calls].sort((a, b) => b[1] - a[1]).slice(0, SHOWN)
      process.stdout.write(
        `  ${label.padEnd(14)} ${perLifecycle(total(calls)).padStart(7)} per lifecycle: ` +
          `${shown.map(([name, n]) => `${name} ${perLifecycle(n)}`).join(', ')}\n`,
      )
    }
    const all = threads.reduce((sum, thread) => sum + total(thread.calls), 0)
    process.stdout.write(`  ${'all threads'.padEnd(14)} ${perLifecycle(all).padStart(7)} per lifecycle\n`)
  } finally {
    rmSync(traces, { recursive: true, force: true })
    await service.stop()
  }
})
