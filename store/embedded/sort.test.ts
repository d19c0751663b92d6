/**
 * The embedded store's sort (mingo.ts `select`) orders documents exactly as mingo's `compare` orders
 * their keys, ties in input order: the keys a field holds as all numbers, all strings, all booleans
 * or all Dates are compared as primitives, every other field through `compare`, and both must agree.
 */
import { compare, resolve } from 'mingo/util'
import t from 'tap'
import type { Document, SortSpec } from '../port.js'
import { compileQuery, select } from './mingo.js'

const day = (n: number): Date => new Date(Date.UTC(2026, 0, n))

/** Each set holds the keys of one shape in `k` (and ties, to show the order is stable), `_id` the input order. */
const SETS: Record<string, unknown[]> = {
  dates: [day(3), day(1), day(2), day(1), new Date(Number.NaN), day(5)],
  numbers: [3, -1, 2.5, 3, Number.NaN, 0, -0, 1e21],
  strings: ['b', 'a', 'B', '', 'ä', 'a', '10', '9', '\u{1F600}'],
  booleans: [true, false, true, false],
  'numbers and strings': [2, '2', 1, 'a', 0],
  'dates and numbers': [day(2), 5, day(1), 1],
  'with null and missing': [2, null, undefined, 1, null],
  arrays: [[3, 1], 2, [0], [], 'x'],
  objects: [{ a: 2 }, { a: 1 }, { b: 0 }, 1],
}

/** The order mingo's `compare` gives, ties kept in input order (Array#sort is stable). */
function reference(docs: Document[], sort: SortSpec): unknown[] {
  const fields = Object.entries(sort)
  return [...docs]
    .sort((a, b) => {
      for (const [field, direction] of fields) {
        const order = compare(resolve(a, field), resolve(b, field))
        if (order !== 0) return order * direction
      }
      return 0
    })
    .map((doc) => doc._id)
}

for (const [name, keys] of Object.entries(SETS)) {
  t.test(`sorting ${name} agrees with mingo's compare`, async (t) => {
    const docs: Document[] = keys.map((k, i) => (k === undefined ? { _id: i } : { _id: i, k, tie: i % 2 }))
    for (const sort of [{ k: 1 }, { k: -1 }, { tie: 1, k: -1 }, { k: 1, _id: -1 }] as SortSpec[]) {
      const got = select(docs, compileQuery({}), { sort }).map((doc) => doc._id)
      t.same(got, reference(docs, sort), JSON.stringify(sort))
    }
  })
}

t.test('sorting leaves the documents as they were', async (t) => {
  const docs: Document[] = [
    { _id: 'a', when: day(2) },
    { _id: 'b', when: day(1) },
  ]
  const page = select(docs, compileQuery({}), { sort: { when: 1 } })
  t.same(
    page.map((doc) => doc._id),
    ['b', 'a'],
  )
  t.ok(page[0]?.when instanceof Date, 'the keys compared as times, the documents still hold Dates')
})
