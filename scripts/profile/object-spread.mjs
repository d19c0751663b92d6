#!/usr/bin/env node
// @ts-check
/**
 * What making an object from a spread costs on this Node, when fields are added to the copy and when
 * they are not, against `withFields` (lib/with-fields.ts) and the new fields written first: a million
 * objects per way, three rounds (docs/performance.md#fields-added-to-a-spread-copy). Each way runs at
 * its own site, warmed up by the rounds before it.
 *
 * Usage: npx tsc -p . && node scripts/profile/object-spread.mjs
 */
import { importBuilt } from '../bench/support/dist.mjs'

const { withFields } = await importBuilt('lib/with-fields.js')

const COUNT = 1_000_000
/** @param {number} size @returns {Record<string, number>} */
const fieldsOf = (size) => Object.fromEntries(Array.from({ length: size }, (_, i) => [`f${i}`, i]))

/** @type {unknown} */
let kept
/** @type {Array<[string, (base: Record<string, number>, i: number) => unknown, number]>} */
const WAYS = [
  ['{ ...base }, 8 fields', (base) => ({ ...base }), 8],
  ['{ ...base, a, b, c, d }, 8 fields and 4 new', (base, i) => ({ ...base, a: i, b: 1, c: 2, d: 3 }), 8],
  ['{ ...base, a, b }, 20 fields and 2 new', (base, i) => ({ ...base, a: i, b: 1 }), 20],
  ['{ ...base, c }, 2 fields and 1 new', (base, i) => ({ ...base, c: i }), 2],
  ['{ ...base, f0, f1 }, both fields of base', (base, i) => ({ ...base, f0: i, f1: 1 }), 14],
  ['withFields(base, { a, b, c, d }), 8 fields', (base, i) => withFields(base, { a: i, b: 1, c: 2, d: 3 }), 8],
  ['{ a, b, c, d, ...base }, 8 fields', (base, i) => ({ a: i, b: 1, c: 2, d: 3, ...base }), 8],
]

for (let round = 1; round <= 3; round++) {
  process.stdout.write(`round ${round}\n`)
  for (const [name, make, size] of WAYS) {
    const base = fieldsOf(size)
    const startedAt = performance.now()
    for (let i = 0; i < COUNT; i++) kept = make(base, i)
    const micros = ((performance.now() - startedAt) * 1000) / COUNT
    process.stdout.write(`  ${micros.toFixed(3).padStart(7)} µs  ${name}\n`)
  }
}
if (kept === undefined) throw new Error('nothing was made')
