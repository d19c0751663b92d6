#!/usr/bin/env node
// @ts-check
/**
 * The store calls a leave-request lifecycle makes, by method and collection: lifecycles (start via
 * `POST /context`, submit, approve) routed in-process into an engine over a temporary embedded
 * store, with the embedded collections' methods counted after a warm-up. Atomic commits
 * (`applyAtomically`) are not collection calls: `journal-batches.mjs` and `store-writes.mjs` tell
 * what those write. A call counted here is a plan, a read and a copy out of the store, so this is the
 * figure that shows a read removed, where the lifecycle benches' spread hides its microseconds
 * (docs/performance.md#deployed-models-kept-per-tenant).
 *
 * Usage: npx tsc -p . && node scripts/profile/store-calls.mjs [lifecycles=1000] [concurrency=8]
 */
import { importBuilt } from '../bench/support/dist.mjs'
import { lifecycleEngine } from './support/in-process-lifecycles.mjs'

const LIFECYCLES = Number(process.argv[2] ?? 1000)
const CONCURRENCY = Number(process.argv[3] ?? 8)
const WARM_UP = 200
/** The port's reads and writes (its index methods are not a lifecycle's). */
const METHODS = [
  'findOne',
  'find',
  'countDocuments',
  'aggregate',
  'insertOne',
  'insertMany',
  'updateOne',
  'updateMany',
  'replaceOne',
  'findOneAndUpdate',
  'deleteOne',
  'deleteMany',
]

const { EmbeddedCollection } = await importBuilt('store/embedded/collection.js')
/** @type {Map<string, number>} */
const calls = new Map()
let counting = false
for (const method of METHODS) {
  /** @type {(...args: unknown[]) => unknown} */
  const original = EmbeddedCollection.prototype[method]
  /** @this {{ collectionName: string }} @param {unknown[]} args */
  EmbeddedCollection.prototype[method] = function (...args) {
    if (counting) {
      const key = `${method} ${this.collectionName}`
      calls.set(key, (calls.get(key) ?? 0) + 1)
    }
    return original.apply(this, args)
  }
}

const engine = await lifecycleEngine({ prefix: 'profile-store-calls-' })
await engine.run(WARM_UP, CONCURRENCY)
counting = true
await engine.run(LIFECYCLES, CONCURRENCY)
counting = false
await engine.close()

let total = 0
for (const [key, count] of [...calls].sort(([a], [b]) => a.localeCompare(b))) {
  total += count
  process.stdout.write(`${(count / LIFECYCLES).toFixed(2).padStart(6)}  ${key}\n`)
}
process.stdout.write(`${(total / LIFECYCLES).toFixed(2).padStart(6)}  store calls per lifecycle in all (${LIFECYCLES} lifecycles)\n`)
