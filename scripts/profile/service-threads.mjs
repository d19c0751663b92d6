#!/usr/bin/env node
// @ts-check
/**
 * Where the all-in-one's CPU goes, thread by thread: leave-request lifecycles through its gateway,
 * as `scripts/bench/lifecycle.mjs` runs them (32 clients on a store seeded for them), and each
 * thread's user and system time per lifecycle over the measured window, read from /proc/<pid>/task.
 * The main thread serves the gateway and the engine; the embedded store's journal thread commits to
 * SQLite (store/embedded/journal-writer.ts), its checkpointer copies the write-ahead log into the
 * database file (store/embedded/checkpointer.ts), and V8's own threads collect garbage and compile.
 * Threads have no names of their own in /proc: the main thread is the one whose id is the process's,
 * the others are told apart by what they do (docs/performance.md#fewer-indexes-per-instance).
 * It also prints the journal's commits from the engine's metrics: how many writes each grouped.
 *
 * Usage: npx tsc -p . && node scripts/profile/service-threads.mjs [seconds=15]
 * Environment: BENCH_WARMUP_S (15), BENCH_CLIENTS (32), BENCH_VIA=engine (the engine's port instead of the gateway's).
 */
import { chooseTarget, clientFor, lifecycle, seedApp, WARMUP_MS } from '../bench/support/lifecycle-load.mjs'
import { DIST } from '../bench/support/dist.mjs'
import { threadCpuMs } from '../bench/support/proc.mjs'
import { startAllInOne } from '../bench/support/process.mjs'
import { withTempDir } from '../bench/support/store.mjs'

const DURATION_MS = Number(process.argv[2] ?? 15) * 1000
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 32)

/** The journal's commits so far, from the engine's metrics: how many, and the writes they held. */
async function journalCommits(/** @type {string} */ engine) {
  const exposition = await (await fetch(`${engine}/metrics`)).text()
  const sample = (/** @type {string} */ name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(exposition)?.[1] ?? 0)
  return { commits: sample('workflow_journal_batch_writes_count'), writes: sample('workflow_journal_batch_writes_sum') }
}

await withTempDir('profile-threads-', async (dataDir) => {
  const pairs = seedApp({ label: 'this tree', dist: DIST }, dataDir, CLIENTS)
  const service = await startAllInOne({ dataDir })
  try {
    const target = await chooseTarget(service, /** @type {import('../bench/support/lifecycle-load.mjs').Pair} */ (pairs[0]))
    const client = clientFor(target.origin, pairs.length)
    const measuredFrom = performance.now() + WARMUP_MS
    const end = measuredFrom + DURATION_MS
    /** @type {ReturnType<typeof threadCpuMs>} */
    let before = new Map()
    let commitsBefore = { commits: 0, writes: 0 }
    const startClock = setTimeout(async () => {
      before = threadCpuMs(service.pid)
      commitsBefore = await journalCommits(service.engine)
    }, WARMUP_MS)
    let lifecycles = 0
    await Promise.all(
      pairs.map(async (pair) => {
        while (performance.now() < end) {
          const started = performance.now()
          await lifecycle(client, pair)
          if (started >= measuredFrom) lifecycles++
        }
      }),
    )
    const after = threadCpuMs(service.pid)
    const commitsAfter = await journalCommits(service.engine)
    clearTimeout(startClock)
    await client.pool.close()
    const perLifecycle = (/** @type {number} */ ms) => ((1000 * ms) / lifecycles).toFixed(0).padStart(6)
    const rate = (lifecycles / (DURATION_MS / 1000)).toFixed(1)
    process.stdout.write(`through the ${target.via}: ${lifecycles} lifecycles in ${DURATION_MS / 1000} s, ${rate}/s\n`)
    const rows = [...after].map(([tid, { userMs, systemMs }]) => {
      const was = before.get(tid) ?? { userMs: 0, systemMs: 0 }
      return { tid, user: userMs - was.userMs, system: systemMs - was.systemMs }
    })
    rows.sort((a, b) => b.user + b.system - (a.user + a.system))
    for (const { tid, user, system } of rows.filter((row) => row.user + row.system > 0)) {
      const label = tid === service.pid ? 'main thread' : `thread ${tid}`
      process.stdout.write(`  ${label.padEnd(14)} ${perLifecycle(user)} µs user ${perLifecycle(system)} µs system per lifecycle\n`)
    }
    const total = rows.reduce((sum, row) => ({ user: sum.user + row.user, system: sum.system + row.system }), { user: 0, system: 0 })
    process.stdout.write(
      `  ${'all threads'.padEnd(14)} ${perLifecycle(total.user)} µs user ${perLifecycle(total.system)} µs system per lifecycle\n`,
    )
    const commits = commitsAfter.commits - commitsBefore.commits
    if (commits > 0) {
      const writesEach = ((commitsAfter.writes - commitsBefore.writes) / commits).toFixed(1)
      process.stdout.write(`  journal: ${(commits / lifecycles).toFixed(2)} commits per lifecycle, ${writesEach} writes each\n`)
    }
  } finally {
    await service.stop()
  }
})
