#!/usr/bin/env node
// @ts-check
/**
 * What the embedded store's journal thread pays per commit, measured apart from everything else:
 * leave-request lifecycles run routed in-process into an engine (support/in-process-lifecycles.mjs), the
 * batches its journal writer hands to the journal thread are kept, and then applied again into fresh
 * SQLite files with the store's own `JournalFile` (store/embedded/journal.ts), which is what the
 * thread runs. Each variant is applied `rounds` times, a fresh file each, the variants alternating:
 *
 * - `as written`: the batches as the engine sent them;
 * - `without cold keys`: the same, but documents going cold carry no index keys (what those keys cost;
 *   not a store that could answer a query);
 * - `merged ×N`: N consecutive batches as one (what larger group commits would save).
 *
 * It also times the hand-off itself, the writer's `postMessage` of each batch's bytes on the engine's thread
 * (after the writer encoded them, store/embedded/journal-batch.ts, which is not in the figure)
 * (wall time: it includes waking the journal thread, and any time the engine's thread then waits for
 * a core).
 *
 * Prints, per variant, the median CPU (user + system) per batch and per write, and the write-ahead
 * log written per batch (its frames, a page each). The log is emptied between slices of batches from
 * a second connection, as the store's checkpointer thread does (store/embedded/checkpointer.ts), and
 * outside the time measured.
 *
 * Usage: npx tsc -p . && node scripts/profile/journal-batches.mjs [lifecycles=2000] [concurrency=16] [rounds=5]
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Worker } from 'node:worker_threads'
import { importBuilt } from '../bench/support/dist.mjs'
import { median, percentile } from '../bench/support/stats.mjs'
import { lifecycleEngine } from './support/in-process-lifecycles.mjs'

const LIFECYCLES = Number(process.argv[2] ?? 2000)
const CONCURRENCY = Number(process.argv[3] ?? 16)
const ROUNDS = Number(process.argv[4] ?? 5)
/** Batches applied between two checkpoints. */
const SLICE = 50

const { JournalFile, openDatabase, prepareLayout } = await importBuilt('store/embedded/journal.js')
const { DATABASE_FILE } = await importBuilt('store/embedded/store.js')
const { decodeBatch } = await importBuilt('store/embedded/journal-batch.js')

/** @typedef {Array<Record<string, unknown>>} Batch */

/**
 * The batches the journal writer posts to its thread while the lifecycles run (not those of the
 * engine's start: index builds and deployments). The writer's `postMessage` is its one way to the
 * thread, so it is where they are seen.
 * @returns {Promise<{ batches: Batch[], handOffMs: number[] }>}
 */
async function capturedBatches() {
  /** @type {Batch[]} */
  const batches = []
  /** @type {number[]} */
  const handOffMs = []
  let capturing = false
  const post = Worker.prototype.postMessage
  /** @param {any} message the writer's request (journal-writer.ts JournalRequest) @param {any} [transfer] */
  Worker.prototype.postMessage = function capture(message, transfer) {
    if (!capturing || message?.kind !== 'batch') return post.call(this, message, transfer)
    // Read before the post: it transfers the batch's bytes away.
    batches.push(decodeBatch(message.bytes))
    const started = performance.now()
    post.call(this, message, transfer)
    handOffMs.push(performance.now() - started)
  }
  const engine = await lifecycleEngine({ prefix: 'profile-journal-' })
  try {
    capturing = true
    await engine.run(LIFECYCLES, CONCURRENCY)
    capturing = false
  } finally {
    Worker.prototype.postMessage = post
    await engine.close()
  }
  return { batches, handOffMs }
}

/** @param {Batch[]} batches */
function withoutColdKeys(batches) {
  return batches.map((ops) => ops.map((op) => ('keys' in op ? { ...op, keys: [] } : op)))
}

/** @param {Batch[]} batches @param {number} factor */
function merged(batches, factor) {
  /** @type {Batch[]} */
  const result = []
  for (let i = 0; i < batches.length; i += factor) result.push(batches.slice(i, i + factor).flat())
  return result
}

/**
 * Applies the batches into a fresh file; answers the CPU and the log bytes they took.
 * @param {Batch[]} batches
 */
function applyAll(batches) {
  const dir = mkdtempSync(join(tmpdir(), 'profile-journal-replay-'))
  const file = join(dir, DATABASE_FILE)
  try {
    const checkpointer = openDatabase(file)
    prepareLayout(checkpointer)
    const journal = new JournalFile(file)
    let cpuMicros = 0
    let logBytes = 0
    for (let i = 0; i < batches.length; i += SLICE) {
      const from = process.cpuUsage()
      for (const ops of batches.slice(i, i + SLICE)) journal.apply(ops)
      const used = process.cpuUsage(from)
      cpuMicros += used.user + used.system
      logBytes += statSync(`${file}-wal`).size
      checkpointer.pragma('wal_checkpoint(TRUNCATE)')
    }
    journal.close()
    checkpointer.close()
    return { cpuMicros, logBytes }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

const { batches, handOffMs } = await capturedBatches()
const writes = batches.reduce((sum, ops) => sum + ops.length, 0)
const opsPerBatch = writes / batches.length
const handOffs = [...handOffMs].sort((a, b) => a - b)
const handOffTotal = handOffs.reduce((sum, ms) => sum + ms, 0)
/** @param {number} ms */
const micros = (ms) => `${(ms * 1000).toFixed(0)} µs`
process.stdout.write(
  `${LIFECYCLES} lifecycles, ${CONCURRENCY} at a time: ${batches.length} batches, ${opsPerBatch.toFixed(1)} journal ops each, ` +
    `${(writes / LIFECYCLES).toFixed(1)} per lifecycle\n` +
    `  the hand-off (postMessage on the engine's thread, wall time): median ${micros(percentile(handOffs, 50))}, ` +
    `mean ${micros(handOffTotal / handOffs.length)}, p90 ${micros(percentile(handOffs, 90))} per batch, ` +
    `${micros(handOffTotal / LIFECYCLES)} per lifecycle\n`,
)
const variants = [
  { name: 'as written', batches },
  { name: 'without cold keys', batches: withoutColdKeys(batches) },
  { name: 'merged ×2', batches: merged(batches, 2) },
  { name: 'merged ×8', batches: merged(batches, 8) },
]
/** @type {Map<string, Array<{ cpuMicros: number, logBytes: number }>>} */
const results = new Map(variants.map((variant) => [variant.name, []]))
for (let round = 0; round < ROUNDS; round++) {
  for (const variant of round % 2 === 0 ? variants : [...variants].reverse()) results.get(variant.name)?.push(applyAll(variant.batches))
}
for (const variant of variants) {
  const runs = results.get(variant.name) ?? []
  // Per batch of the engine's, whatever the variant grouped: the variants then compare as they are.
  const cpuPerBatch = median(runs.map((run) => run.cpuMicros / batches.length))
  const logPerBatch = median(runs.map((run) => run.logBytes / batches.length))
  const perLifecycle = (cpuPerBatch * batches.length) / LIFECYCLES
  process.stdout.write(
    `  ${variant.name.padEnd(18)} ${cpuPerBatch.toFixed(0).padStart(5)} µs of CPU per batch of the engine's ` +
      `(${(cpuPerBatch / opsPerBatch).toFixed(1)} µs per op, ${perLifecycle.toFixed(0)} µs per lifecycle), ` +
      `${(logPerBatch / 1024).toFixed(1)} KiB of log\n`,
  )
}
