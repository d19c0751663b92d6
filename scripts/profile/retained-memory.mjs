#!/usr/bin/env node
// @ts-check
/**
 * What a lifecycle leaves behind in memory: leave-request lifecycles routed in-process into an engine
 * over a temporary embedded store (support/in-process-lifecycles.mjs), the heap measured after a full
 * garbage collection once a warm-up is done and again after `lifecycles` more. Every lifecycle ends
 * its instance, so what stays is history the store should have let go of (docs/performance.md#what-a-lifecycle-leaves-in-memory):
 * prints the heap retained per lifecycle and the documents each collection still holds in memory.
 *
 * Usage: npx tsc -p . && node --expose-gc scripts/profile/retained-memory.mjs [lifecycles=20000] [concurrency=16]
 */
import { lifecycleEngine } from './support/in-process-lifecycles.mjs'

const LIFECYCLES = Number(process.argv[2] ?? 20_000)
const CONCURRENCY = Number(process.argv[3] ?? 16)
const WARM_UP = 2_000
const collect = globalThis.gc
if (!collect) throw new Error('run with node --expose-gc: the heap is measured after a full collection')

const engine = await lifecycleEngine({ prefix: 'profile-retained-' })
/** The heap after a full collection (twice: the first may leave what a finalizer frees). */
const settledHeap = () => {
  collect()
  collect()
  return process.memoryUsage().heapUsed
}
/** The collections holding documents in memory, with how many. */
const hotDocuments = async () => {
  /** @type {Record<string, number>} */
  const held = {}
  for (const name of await engine.store.listCollections()) {
    const count = engine.store.hotDocuments(name)
    if (count > 0) held[name] = count
  }
  return held
}

await engine.run(WARM_UP, CONCURRENCY)
const heapBefore = settledHeap()
const heldBefore = await hotDocuments()
await engine.run(LIFECYCLES, CONCURRENCY)
const heapAfter = settledHeap()
const heldAfter = await hotDocuments()
const mib = (/** @type {number} */ bytes) => (bytes / 2 ** 20).toFixed(1)
process.stdout.write(
  `${LIFECYCLES} lifecycles after ${WARM_UP} of warm-up: heap ${mib(heapBefore)} → ${mib(heapAfter)} MiB, ` +
    `${((heapAfter - heapBefore) / LIFECYCLES).toFixed(0)} bytes retained per lifecycle\n`,
)
for (const name of Object.keys({ ...heldBefore, ...heldAfter }).sort())
  process.stdout.write(`  ${name}: ${heldBefore[name] ?? 0} → ${heldAfter[name] ?? 0} documents in memory\n`)
await engine.close()
