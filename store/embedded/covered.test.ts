/**
 * Covered reads (covered.ts): a find whose filter, sort and projection name only fields of the index
 * its cold plan reads is answered from SQLite's index entries without reading the cold documents,
 * with the same answer as reading them, across pages of entries; an entry that does not tell a value
 * exactly (null, missing, booleans, objects) and a field holding an array fall back to the document.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import type { Document, Filter, FindOptions } from '../port.js'
import type { ColdTier } from './cold-tier.js'
import { PAGE } from './cold-file.js'
import { coveredDocument, coverOf, pathsRead } from './covered.js'
import { keyOf, valueOfKey } from './index-keys.js'
import { fieldEnd, orderedKey, valueOfFieldAt, valueOfOrderedKey } from './ordered-keys.js'
import { DATABASE_FILE, EmbeddedStore } from './store.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const coldTier: ColdTier = (collection) => (collection === 'instances' ? { path: 'status', values: ['ended'] } : undefined)
const DAY = 86_400_000
const INDEX = { kind: 1, when: -1, code: 1, n: 1, 'meta.label': 1 } as const
/** More ended instances than two pages of entries, so that a covered read resumes across pages. */
const ENDED = 2 * PAGE + 37

function instance(i: number, status: string): Document {
  return {
    _id: `i${String(i).padStart(4, '0')}`,
    status,
    kind: i % 3 === 0 ? 'b' : 'a',
    when: new Date(Date.UTC(2025, 0, 1) + i * DAY),
    code: `C${i}\u0000é😀`,
    n: i % 7 === 0 ? -i / 4 : i * 1000.5,
    meta: { label: `L${i % 5}`, other: i },
    body: 'x'.repeat(200),
  }
}

async function opened(t: Tap, docs: Document[]): Promise<{ store: EmbeddedStore; dataDir: string }> {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-covered-'))
  const store = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(async () => {
    await store.close()
    rmSync(dataDir, { recursive: true, force: true })
  })
  const c = store.collection('instances')
  await c.createIndex(INDEX, { name: 'covering' })
  await c.insertMany(docs)
  return { store, dataDir }
}

/** The same find, made to read every document: a filter on a field no index holds. */
function uncovered(filter: Filter): Filter {
  return { $and: [filter, { notIndexed: { $exists: false } }] }
}

const RANGE: Filter = { kind: 'a', when: { $gte: new Date(Date.UTC(2025, 0, 20)), $lt: new Date(Date.UTC(2026, 6, 1)) } }
const READ: FindOptions = { sort: { when: -1 }, projection: { code: 1, n: 1, when: 1, 'meta.label': 1 } }

t.test('a find of indexed fields only is answered from the cold entries, as reading the documents answers it', async (t) => {
  const docs = [
    ...Array.from({ length: ENDED }, (_, i) => instance(i, 'ended')),
    instance(ENDED, 'running'),
    instance(ENDED + 3, 'running'),
  ]
  const { store, dataDir } = await opened(t, docs)
  const c = store.collection('instances')
  t.equal(store.hotDocuments('instances'), 2, 'the ended instances are cold')
  const expected = await c.find(uncovered(RANGE), READ).toArray()
  t.ok(expected.length > PAGE, `the range holds ${expected.length} instances: more than a page of entries`)
  t.same(await c.find(RANGE, READ).toArray(), expected, 'the covered read gives the same answer, in the same order')
  t.same(
    await c.find(RANGE, { ...READ, sort: { when: 1 }, skip: 3, limit: 40 }).toArray(),
    expected.slice().reverse().slice(3, 43),
    'and so does a page of the oldest first',
  )

  // Rewrite every cold document's JSON behind the store's back: a read of the documents now sees it, a covered one does not.
  const file = new Database(join(dataDir, DATABASE_FILE))
  file.prepare(`UPDATE documents SET doc = json_set(doc, '$.code', 'rewritten') WHERE collection = 'instances' AND cold = 1`).run()
  file.close()
  t.same(await c.find(RANGE, READ).toArray(), expected, 'the covered read did not read the documents')
  const read = await c.find(uncovered(RANGE), READ).toArray()
  t.ok(
    read.some((doc) => doc.code === 'rewritten'),
    'a read that needs a field no index holds reads the documents',
  )
  t.match(
    await c.find(RANGE, { projection: { code: 1, body: 1 } }).toArray(),
    [{ code: 'rewritten' }],
    'as one that projects such a field does',
  )
})

t.test('entries that do not tell a value exactly, and fields holding arrays, are read from the documents', async (t) => {
  const odd: Document[] = [
    { ...instance(1, 'ended'), code: null },
    { ...instance(2, 'ended'), code: undefined },
    { ...instance(4, 'ended'), n: true },
    { ...instance(5, 'ended'), meta: { label: { nested: 'object' } } },
    { ...instance(7, 'ended'), meta: {} },
    { ...instance(8, 'ended'), meta: 'flat' },
  ]
  const plain = Array.from({ length: 30 }, (_, i) => instance(i + 10, 'ended'))
  const { store } = await opened(t, [...odd, ...plain])
  const c = store.collection('instances')
  const all: Filter = { kind: 'a' }
  const expected = await c.find(uncovered(all), READ).toArray()
  const covered = await c.find(all, READ).toArray()
  t.same(covered, expected, 'null, missing, booleans and objects come back as stored')
  const missing = covered.find((doc) => doc._id === 'i0002')
  t.ok(missing && !('code' in missing), 'a missing field stays missing')
  t.equal(covered.find((doc) => doc._id === 'i0001')?.code, null, 'a null stays null')

  await c.insertOne({ ...instance(90, 'ended'), code: ['x', 'y'] })
  t.same(await c.find(all, READ).toArray(), await c.find(uncovered(all), READ).toArray(), 'a field holding an array is never covered')
})

t.test('the fields a find reads: filter, sort and an inclusion projection; none when it needs the whole document', async (t) => {
  t.same([...(pathsRead({ a: 1, $or: [{ b: 2 }, { 'c.d': 3 }], $comment: 'x' }, { e: -1 }, { f: 1, 'g.h': true }) ?? [])].sort(), [
    '_id',
    'a',
    'b',
    'c.d',
    'e',
    'f',
    'g.h',
  ])
  t.same([...(pathsRead({}, undefined, { _id: 0, f: 1 }) ?? [])], ['f'], '`_id` excluded')
  t.equal(pathsRead({ a: 1 }, undefined, undefined), undefined, 'no projection')
  t.equal(pathsRead({ a: 1 }, undefined, { f: 0 }), undefined, 'an exclusion projection')
  t.equal(pathsRead({ a: 1 }, undefined, { _id: 0 }), undefined, 'a projection that only drops `_id`')
  t.equal(pathsRead({ $expr: { $gt: ['$a', 1] } }, undefined, { f: 1 }), undefined, '`$expr` reads the document')
  t.equal(pathsRead({ $where: 'true' }, undefined, { f: 1 }), undefined, '`$where` too')
})

t.test('an entry field gives back the value it encodes, or nothing when it does not tell it exactly', async (t) => {
  const values = [
    0,
    -0,
    1,
    -1,
    0.1,
    -2.5,
    1e300,
    -1e-300,
    Number.MAX_SAFE_INTEGER,
    '',
    'a',
    'a\u0000b\u0000',
    'é😀',
    new Date(0),
    new Date(-1e12),
  ]
  for (const value of values) t.same(valueOfOrderedKey(orderedKey(value)), Object.is(value, -0) ? 0 : value, `${String(value)} round-trips`)
  for (const value of [null, undefined, true, false, { a: 1 }, new Date(Number.NaN), Number.NaN])
    t.equal(valueOfOrderedKey(orderedKey(value)), undefined, `${JSON.stringify(value)} is not told`)
  for (const id of ['abc', 'a:b', 42, -1.5, true, new Date(5)]) t.same(valueOfKey(keyOf(id)), id, `the id ${String(id)} round-trips`)
  t.equal(valueOfKey(keyOf({ oid: 1 })), undefined, 'an object id is not told')
  t.equal(valueOfKey(keyOf(null)), undefined)
})

t.test('a field is read in place from anywhere in an entry; a cut or foreign encoding is not told', async (t) => {
  const values = ['a\u0000b', -2.5, new Date(86_400_000), '', 7]
  const entry = values.map(orderedKey).join('') + 'id-1'
  let start = 0
  for (const value of values) {
    const end = fieldEnd(entry, start)
    t.same(valueOfFieldAt(entry, start, end), value, `${String(value)} at ${start}`)
    start = end
  }
  t.equal(entry.slice(start), 'id-1', 'the id follows the last field')
  const number = orderedKey(12)
  t.equal(valueOfOrderedKey(number.slice(0, 5) + number.slice(-2)), undefined, 'a number with digits missing')
  t.equal(valueOfOrderedKey(number.slice(0, -1)), undefined, 'an encoding without its end')
  t.equal(valueOfOrderedKey('x\u0000\u0000'), undefined, 'an unknown tag')
})

t.test('a cover decodes each entry on its own, whether a field repeats the entry before or changes to as long a value', async (t) => {
  const cover = coverOf(['kind', 'label', 'when'], new Set(['_id', 'kind', 'label', 'when']), () => false)
  if (!cover) throw new Error('the three fields cover the read')
  const when = new Date(Date.UTC(2025, 0, 1))
  const entry = (kind: string, label: string) => orderedKey(kind) + orderedKey(label) + orderedKey(when)
  const read = (kind: string, label: string, id: string) => coveredDocument(cover, entry(kind, label), keyOf(id))
  const first = read('a', 'L1', 'i1')
  t.same(first, { _id: 'i1', kind: 'a', label: 'L1', when })
  t.same(read('a', 'L1', 'i2'), { _id: 'i2', kind: 'a', label: 'L1', when })
  t.same(read('b', 'L2', 'i3'), { _id: 'i3', kind: 'b', label: 'L2', when })
  t.same(read('b', 'L22', 'i4'), { _id: 'i4', kind: 'b', label: 'L22', when })
  t.same(read('a', 'L1', 'i5'), { _id: 'i5', kind: 'a', label: 'L1', when })
  // Dates are objects a caller may change: every document gets its own.
  const again = read('a', 'L1', 'i6')
  t.not(again?.when, first?.when)
})
