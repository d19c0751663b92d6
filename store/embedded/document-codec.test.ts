/**
 * `storedAlike` stands in for comparing two encodings (a replaceOne that changes nothing writes
 * nothing): on documents whose encoding is exact it must answer what comparing the JSON answers.
 */
import t from 'tap'
import { decodeDocument, encodeForStorage, storedAlike } from './document-codec.js'

const when = new Date('2024-01-01T00:00:00Z')
const VALUES: unknown[] = [
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u1', 'u2'] }], at: when },
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u1', 'u2'] }], at: new Date(when.getTime()) },
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u2', 'u1'] }], at: when },
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u1'] }], at: when },
  { _id: 'n', tasks: [{ id: 't1', users: ['u1', 'u2'] }], status: 'waiting', at: when },
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u1', 'u2'] }], at: new Date(when.getTime() + 1) },
  { _id: 'n', status: 'waiting', tasks: [{ id: 't1', users: ['u1', 'u2'] }], at: when.toISOString() },
  { _id: 'n', status: 'waiting', tasks: { 0: { id: 't1', users: ['u1', 'u2'] } }, at: when },
  { _id: 'n', status: 'waiting', tasks: [], at: when },
  { _id: 'n', count: 0 },
  { _id: 'n', count: -0 },
  { _id: 'n', count: '0' },
  { _id: 'n', count: null },
  { _id: 'n', count: false },
  { _id: 'n', at: new Date(Number.NaN) },
  { _id: 'n', at: new Date(Number.NaN), more: 1 },
  { _id: 'n', nested: { a: { b: [1, [2, 3]] } } },
  { _id: 'n', nested: { a: { b: [1, [2, 4]] } } },
  { _id: 'n', ['__proto__']: { a: 1 } },
  [1, 2],
  'text',
  null,
]

t.test('storedAlike answers what comparing the encodings answers, on every pair of exact documents', async (t) => {
  let pairs = 0
  for (const a of VALUES) {
    for (const b of VALUES) {
      const encodedA = encodeForStorage(a as never)
      const encodedB = encodeForStorage(b as never)
      t.ok(encodedA.exact && encodedB.exact, 'the values are exact')
      t.equal(storedAlike(a, b), encodedA.text === encodedB.text, `${encodedA.text} against ${encodedB.text}`)
      pairs++
    }
  }
  t.equal(pairs, VALUES.length ** 2)
})

t.test('a document is stored alike with what decoding its encoding gives back', async (t) => {
  for (const value of VALUES) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue
    const stored = decodeDocument(encodeForStorage(value as never).text)
    t.ok(storedAlike(value, stored), JSON.stringify(value))
  }
})
