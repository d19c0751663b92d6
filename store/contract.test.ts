/**
 * The store contract: the same assertions against the embedded store (always), the remote client
 * in front of it (always; what a gateway on another thread uses) and MongoDB (when MONGODB_URI is
 * set, in a throwaway database). Repositories rely on exactly what is checked here, so a difference
 * between the stores shows up as a failure on one side.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Readable } from 'node:stream'
import { MessageChannel } from 'node:worker_threads'
import t from 'tap'
import type { ColdTier } from './embedded/cold-tier.js'
import { EmbeddedStore } from './embedded/store.js'
import { MongoStore } from './mongodb/store.js'
import { type Document, type Filter, isUnmatchedWriteError, type Store } from './port.js'
import { RemoteStore } from './remote/client.js'
import { serveStore } from './remote/host.js'
import { documentsById } from './test-support.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

interface Backend {
  /** Opens the same underlying storage every time (so a reopen sees what was written before). */
  open(): Promise<Store>
  destroy(): Promise<void>
}

function embeddedBackend(coldTier?: ColdTier): Backend {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-contract-'))
  return {
    open: async () => EmbeddedStore.open({ dataDir, ...(coldTier ? { coldTier } : {}) }),
    destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
  }
}

/**
 * The embedded store behind a remote client over a real MessageChannel, host and client on this
 * thread (store/remote/remote.test.ts crosses a real Worker). Closing it closes what the
 * all-in-one closes one by one: the client, the host, the store.
 */
function remoteBackend(): Backend {
  const embedded = embeddedBackend()
  return {
    open: async () => {
      const store = await embedded.open()
      const channel = new MessageChannel()
      const host = serveStore(store, channel.port1)
      const client = new RemoteStore(channel.port2, store.kind)
      return {
        kind: client.kind,
        files: client.files,
        collection: <T extends object = Document>(name: string) => client.collection<T>(name),
        listCollections: () => client.listCollections(),
        applyAtomically: (writes) => client.applyAtomically(writes),
        close: async () => {
          await client.close()
          await host.close()
          await store.close()
        },
      }
    },
    destroy: embedded.destroy,
  }
}

function mongoBackend(uri: string): Backend {
  const dbName = `store_contract_${process.pid}_${Date.now()}`
  return {
    open: () => MongoStore.open({ uri, dbName }),
    destroy: async () => {
      const store = await MongoStore.open({ uri, dbName })
      await store.db.dropDatabase()
      await store.close()
    },
  }
}

const HEX_ID = /^[0-9a-f]{24}$/

const ids = (docs: Document[]): unknown[] => docs.map((doc) => doc._id)

const QUERY_DOCS: Document[] = [
  {
    _id: 'a',
    n: 1,
    s: 'alpha',
    tags: ['x', 'y'],
    nested: { k: 1, deep: { v: 'p' } },
    items: [
      { sku: 'A', qty: 2 },
      { sku: 'B', qty: 5 },
    ],
    when: new Date('2024-01-01T00:00:00Z'),
    flag: true,
  },
  {
    _id: 'b',
    n: 2,
    s: 'beta',
    tags: ['y'],
    nested: { k: 2 },
    items: [{ sku: 'A', qty: 10 }],
    when: new Date('2024-06-01T00:00:00Z'),
    flag: false,
    opt: null,
  },
  { _id: 'c', n: 3, s: 'gamma', tags: [], nested: { k: 3, deep: { v: 'q' } }, items: [], when: new Date('2025-01-01T00:00:00Z') },
  { _id: 'd', n: 4, s: 'Delta', tags: ['x', 'z', 'w'], items: [{ sku: 'C', qty: 1 }] },
]

const QUERY_CASES: Array<[string, Filter, string[]]> = [
  ['implicit $eq', { n: 2 }, ['b']],
  ['$eq', { n: { $eq: 2 } }, ['b']],
  ['$ne', { n: { $ne: 2 } }, ['a', 'c', 'd']],
  ['$gt', { n: { $gt: 2 } }, ['c', 'd']],
  ['$gte', { n: { $gte: 2 } }, ['b', 'c', 'd']],
  ['$lt', { n: { $lt: 2 } }, ['a']],
  ['$lte', { n: { $lte: 2 } }, ['a', 'b']],
  ['$in', { n: { $in: [1, 3, 99] } }, ['a', 'c']],
  ['$nin', { n: { $nin: [1, 3] } }, ['b', 'd']],
  ['$and', { $and: [{ n: { $gt: 1 } }, { n: { $lt: 4 } }] }, ['b', 'c']],
  ['$or', { $or: [{ n: 1 }, { s: 'gamma' }] }, ['a', 'c']],
  ['$nor', { $nor: [{ n: 1 }, { n: 2 }] }, ['c', 'd']],
  ['$not', { n: { $not: { $gt: 2 } } }, ['a', 'b']],
  ['$exists true', { opt: { $exists: true } }, ['b']],
  ['$exists false on a dotted path', { 'nested.deep': { $exists: false } }, ['b', 'd']],
  ['null matches null and missing', { opt: null }, ['a', 'b', 'c', 'd']],
  ['$regex string', { s: { $regex: '^[a-c]' } }, ['a', 'b']],
  ['$regex with $options', { s: { $regex: '^d', $options: 'i' } }, ['d']],
  ['RegExp literal', { s: /^g/ }, ['c']],
  ['$elemMatch', { items: { $elemMatch: { sku: 'A', qty: { $gt: 5 } } } }, ['b']],
  ['$size', { tags: { $size: 2 } }, ['a']],
  ['$size 0', { tags: { $size: 0 } }, ['c']],
  ['dotted path', { 'nested.k': 3 }, ['c']],
  ['deep dotted path', { 'nested.deep.v': 'p' }, ['a']],
  ['dotted path through an array', { 'items.sku': 'A' }, ['a', 'b']],
  ['operator through an array', { 'items.qty': { $gte: 5 } }, ['a', 'b']],
  ['array field holds a value', { tags: 'x' }, ['a', 'd']],
  ['array field equals an array', { tags: ['x', 'y'] }, ['a']],
  ['array field $in', { tags: { $in: ['z', 'nothing'] } }, ['d']],
  ['dates', { when: { $gte: new Date('2024-03-01T00:00:00Z') } }, ['b', 'c']],
  ['booleans', { flag: false }, ['b']],
  ['indexed field $in', { s: { $in: ['alpha', 'gamma'] } }, ['a', 'c']],
  ['indexed field and another condition', { s: 'beta', n: { $gt: 5 } }, []],
  ['compound index first field', { n: { $in: [2, 4] }, s: { $ne: 'Delta' } }, ['b']],
  ['_id $in', { _id: { $in: ['a', 'd', 'zz'] } }, ['a', 'd']],
  ['_id and a condition', { _id: 'a', n: 1 }, ['a']],
  ['empty filter', {}, ['a', 'b', 'c', 'd']],
]

async function contract(t: Tap, backend: Backend): Promise<void> {
  let store = await backend.open()
  t.teardown(async () => {
    await store.close()
    await backend.destroy()
  })

  await t.test('insertOne, insertMany, generated and explicit ids', async (t) => {
    const c = store.collection('inserts')
    const doc: Document = { name: 'generated' }
    const result = await c.insertOne(doc)
    t.equal(result.acknowledged, true)
    t.match(result.insertedId, HEX_ID, 'generated ids are 24-hex strings')
    t.equal(doc._id, result.insertedId, 'the id is put on the inserted document, as the driver does')
    t.same(await c.findOne({ _id: result.insertedId }), { _id: result.insertedId, name: 'generated' })

    t.match(await c.insertOne({ _id: 'explicit', name: 'x' }), { acknowledged: true, insertedId: 'explicit' })
    await t.rejects(c.insertOne({ _id: 'explicit', name: 'again' }), { code: 11000 })
    t.same(await c.findOne({ _id: 'explicit' }), { _id: 'explicit', name: 'x' })

    const many = await c.insertMany([{ _id: 'm1', n: 1 }, { _id: 'm2', n: 2 }, { n: 3 }])
    t.equal(many.insertedCount, 3)
    t.equal(await c.countDocuments(), 5)
  })

  await t.test('dates and nested values round-trip; results are copies', async (t) => {
    const c = store.collection('copies')
    const when = new Date('2024-02-29T12:34:56.789Z')
    await c.insertOne({ _id: 'd1', when, nested: { list: [{ at: when }] } })
    const found = await c.findOne({ _id: 'd1' })
    t.ok(found?.when instanceof Date, 'a Date comes back as a Date')
    t.same(found, { _id: 'd1', when, nested: { list: [{ at: when }] } })
    ;(found?.nested as { list: unknown[] }).list.push('mutated by the caller')
    t.same((await c.findOne({ _id: 'd1' }))?.nested, { list: [{ at: when }] }, 'mutating a result does not touch the store')
    const projected = [
      ...(await c.find({ _id: 'd1' }, { projection: { nested: 1, when: 1 } }).toArray()),
      await c.findOne({ _id: 'd1' }, { projection: { 'nested.list': 1, when: 1 } }),
      await c.findOne({ _id: 'd1' }, { projection: { _id: 0 } }),
      await c.findOne({ _id: 'd1' }, { projection: { 'nested.other': 0 } }),
    ]
    for (const result of projected) {
      ;(result?.nested as { list: Array<{ at: Date }> }).list[0]?.at.setTime(0)
      ;(result?.when as Date).setTime(0)
    }
    t.same(await c.findOne({ _id: 'd1' }), { _id: 'd1', when, nested: { list: [{ at: when }] } }, 'nor does mutating a projected one')
    t.same(await c.findOne({ _id: 'none' }), null)
  })

  await t.test('query operators', async (t) => {
    const c = store.collection('query')
    await c.createIndex({ s: 1 })
    await c.createIndex({ n: 1, s: -1 })
    await c.insertMany(QUERY_DOCS.map((doc) => structuredClone(doc)))
    for (const [name, filter, expected] of QUERY_CASES) {
      const found = await c.find(filter, { sort: { _id: 1 } }).toArray()
      t.same(ids(found), expected, name)
      t.equal(await c.countDocuments(filter), expected.length, `${name} (countDocuments)`)
    }
  })

  await t.test('an indexed field of date arrays: one bound, two bounds, and an $elemMatch of two bounds on one element', async (t) => {
    const c = store.collection('dueDates')
    await c.createIndex({ due: 1 })
    const day = (n: number) => new Date(Date.UTC(2026, 2, n))
    await c.insertMany([
      { _id: 'early', due: [day(1), day(20)] },
      { _id: 'middle', due: [day(10)] },
      { _id: 'late', due: [day(25), day(28)] },
      { _id: 'none', due: [] },
    ])
    const cases: Array<[string, Filter, string[]]> = [
      ['$lte alone', { due: { $lte: day(11) } }, ['early', 'middle']],
      ['$gt alone', { due: { $gt: day(21) } }, ['late']],
      ['$gt and $lte, met by two elements', { due: { $gt: day(5), $lte: day(15) } }, ['early', 'middle']],
      ['$elemMatch of $gt and $lte', { due: { $elemMatch: { $gt: day(5), $lte: day(15) } } }, ['middle']],
      ['$elemMatch of $gte and $lt', { due: { $elemMatch: { $gte: day(20), $lt: day(26) } } }, ['early', 'late']],
    ]
    for (const [name, filter, expected] of cases) t.same(ids(await c.find(filter, { sort: { _id: 1 } }).toArray()), expected, name)
  })

  await t.test('sort, skip, limit, projection', async (t) => {
    const c = store.collection('query')
    t.same(ids(await c.find({}, { sort: { n: -1 } }).toArray()), ['d', 'c', 'b', 'a'])
    t.same(ids(await c.find({}, { sort: { n: 1 }, skip: 1, limit: 2 }).toArray()), ['b', 'c'])
    t.same(ids(await c.find({}, { sort: { n: 1 }, skip: 3, limit: 10 }).toArray()), ['d'])
    t.same(ids(await c.find({}, { sort: { s: 1 } }).toArray()), ['d', 'a', 'b', 'c'], 'strings sort by code point')
    t.same(ids(await c.find({}, { sort: { 'nested.k': -1 } }).toArray()), ['c', 'b', 'a', 'd'], 'missing sorts lowest')
    t.same(
      ids(await c.find({}, { sort: { flag: 1, n: -1 } }).toArray()),
      ['d', 'c', 'b', 'a'],
      'compound sort, missing before false before true',
    )
    t.same(ids(await c.find({ tags: 'x' }, { sort: { when: -1 } }).toArray()), ['a', 'd'])

    t.same(await c.find({ _id: 'a' }, { projection: { s: 1 } }).toArray(), [{ _id: 'a', s: 'alpha' }])
    t.same(await c.find({ _id: 'a' }, { projection: { s: 1, _id: 0 } }).toArray(), [{ s: 'alpha' }])
    t.same(await c.find({ _id: { $in: ['a', 'd'] } }, { sort: { _id: 1 }, projection: { 'nested.k': 1 } }).toArray(), [
      { _id: 'a', nested: { k: 1 } },
      { _id: 'd' },
    ])
    t.same(
      await c.find({ _id: 'a' }, { projection: { 'items.sku': 1, 'nested.deep.v': 1, _id: 0 } }).toArray(),
      [{ nested: { deep: { v: 'p' } }, items: [{ sku: 'A' }, { sku: 'B' }] }],
      'a path through an array of documents keeps that field of each',
    )
    t.same(await c.find({ _id: 'b' }, { projection: { items: 0, tags: 0, nested: 0, when: 0 } }).toArray(), [
      { _id: 'b', n: 2, s: 'beta', flag: false, opt: null },
    ])
    t.same(await c.findOne({ n: { $gte: 2 } }, { sort: { n: -1 }, projection: { n: 1, _id: 0 } }), { n: 4 })
    t.same(await c.findOne({}, { sort: { n: 1 } }).then((doc) => doc?._id), 'a')
  })

  await t.test('update operators', async (t) => {
    const c = store.collection('updates')
    const reset = async (doc: Document): Promise<void> => {
      await c.deleteMany({})
      await c.insertOne({ _id: 'u', ...doc })
    }
    const check = async (name: string, start: Document, update: Document, expected: Document, modified = 1): Promise<void> => {
      await reset(start)
      const result = await c.updateOne({ _id: 'u' }, update)
      t.same([result.matchedCount, result.modifiedCount], [1, modified], `${name}: counts`)
      t.same(await c.findOne({ _id: 'u' }), { _id: 'u', ...expected }, name)
    }

    await check('$set', { a: 1 }, { $set: { a: 2, b: 'x' } }, { a: 2, b: 'x' })
    await check('$set dotted creates objects', { a: 1 }, { $set: { 'p.q.r': 1 } }, { a: 1, p: { q: { r: 1 } } })
    await check('$set into an existing object', { p: { q: 1, z: 2 } }, { $set: { 'p.q': 5 } }, { p: { q: 5, z: 2 } })
    await check('$set the same value', { a: 1 }, { $set: { a: 1 } }, { a: 1 }, 0)
    await check('$set an array element', { list: [1, 2, 3] }, { $set: { 'list.1': 9 } }, { list: [1, 9, 3] })
    await check('$set a Date', { a: 1 }, { $set: { at: new Date('2030-01-01T00:00:00Z') } }, { a: 1, at: new Date('2030-01-01T00:00:00Z') })
    await check('$unset', { a: 1, b: 2, p: { q: 1, r: 2 } }, { $unset: { a: '', 'p.q': '' } }, { b: 2, p: { r: 2 } })
    await check('$unset a missing field', { a: 1 }, { $unset: { b: '' } }, { a: 1 }, 0)
    await check('$inc', { n: 1 }, { $inc: { n: 2, m: 5, 'p.q': -1 } }, { n: 3, m: 5, p: { q: -1 } })
    await check(
      '$inc and $set together (compare-and-set shape)',
      { version: 3, s: 'a' },
      { $set: { s: 'b' }, $inc: { version: 1 } },
      { version: 4, s: 'b' },
    )
    await check('$push', { list: [1] }, { $push: { list: 2 } }, { list: [1, 2] })
    await check('$push to a missing field', { a: 1 }, { $push: { list: 'x' } }, { a: 1, list: ['x'] })
    await check('$push $each', { list: [1] }, { $push: { list: { $each: [2, 3] } } }, { list: [1, 2, 3] })
    await check('$push $each $position', { list: [1, 2] }, { $push: { list: { $each: [0], $position: 0 } } }, { list: [0, 1, 2] })
    await check('$push $each $slice', { list: [1, 2, 3] }, { $push: { list: { $each: [4, 5], $slice: -3 } } }, { list: [3, 4, 5] })
    await check('$push an object', { list: [] }, { $push: { list: { k: 1 } } }, { list: [{ k: 1 }] })
    await check('$pull a value', { list: [1, 2, 1, 3] }, { $pull: { list: 1 } }, { list: [2, 3] })
    await check('$pull by condition', { list: [1, 2, 3, 4] }, { $pull: { list: { $gte: 3 } } }, { list: [1, 2] })
    await check(
      '$pull documents',
      {
        list: [
          { k: 1, v: 'a' },
          { k: 2, v: 'b' },
        ],
      },
      { $pull: { list: { k: 1 } } },
      { list: [{ k: 2, v: 'b' }] },
    )
    await check('$addToSet new', { set: ['a'] }, { $addToSet: { set: 'b' } }, { set: ['a', 'b'] })
    await check('$addToSet existing', { set: ['a'] }, { $addToSet: { set: 'a' } }, { set: ['a'] }, 0)
    await check('$addToSet $each', { set: ['a'] }, { $addToSet: { set: { $each: ['a', 'b', 'c'] } } }, { set: ['a', 'b', 'c'] })
    await check('$setOnInsert is ignored on update', { a: 1 }, { $set: { a: 2 }, $setOnInsert: { created: true } }, { a: 2 })
    await check('$min', { low: 10, high: 3 }, { $min: { low: 5, high: 7 } }, { low: 5, high: 3 })
    await check('$max', { low: 10, high: 3 }, { $max: { low: 5, high: 7 } }, { low: 10, high: 7 })
    await check(
      '$min on a Date',
      { at: new Date('2024-05-01T00:00:00Z') },
      { $min: { at: new Date('2024-01-01T00:00:00Z') } },
      { at: new Date('2024-01-01T00:00:00Z') },
    )
    await check(
      'all-positional $[]',
      {
        items: [
          { k: 1, v: 'a' },
          { k: 2, v: 'b' },
        ],
      },
      { $set: { 'items.$[].v': 'z' } },
      {
        items: [
          { k: 1, v: 'z' },
          { k: 2, v: 'z' },
        ],
      },
    )

    await reset({
      items: [
        { k: 1, v: 'a' },
        { k: 2, v: 'b' },
      ],
    })
    await c.updateOne({ _id: 'u', 'items.k': 2 }, { $set: { 'items.$.v': 'found' } })
    t.same(
      (await c.findOne({ _id: 'u' }))?.items,
      [
        { k: 1, v: 'a' },
        { k: 2, v: 'found' },
      ],
      'positional $ resolves against the filter',
    )

    await reset({ a: 1 })
    const before = Date.now()
    await c.updateOne({ _id: 'u' }, { $currentDate: { touched: true } })
    const touched = (await c.findOne({ _id: 'u' }))?.touched
    t.ok(touched instanceof Date && touched.getTime() >= before - 1000, '$currentDate sets a Date of now')

    await reset({ a: 1 })
    await t.rejects(c.updateOne({ _id: 'u' }, { $set: { _id: 'other' } }), { code: 66 }, '_id is immutable')
    await t.rejects(c.updateOne({ _id: 'u' }, { a: 2 }), 'an update needs operators')
    t.same(await c.findOne({ _id: 'u' }), { _id: 'u', a: 1 }, 'failed updates change nothing')

    const missing = await c.updateOne({ _id: 'missing' }, { $set: { a: 1 } })
    t.same([missing.matchedCount, missing.modifiedCount, missing.upsertedCount, missing.upsertedId], [0, 0, 0, null])
  })

  await t.test('compare-and-set on version', async (t) => {
    const c = store.collection('cas')
    await c.insertOne({ _id: 'p', version: 1, state: 'a' })
    const first = await c.updateOne({ _id: 'p', version: 1 }, { $set: { state: 'b' }, $inc: { version: 1 } })
    const stale = await c.updateOne({ _id: 'p', version: 1 }, { $set: { state: 'c' }, $inc: { version: 1 } })
    t.same([first.matchedCount, first.modifiedCount], [1, 1])
    t.same([stale.matchedCount, stale.modifiedCount], [0, 0], 'a stale version matches nothing')
    t.same(await c.findOne({ _id: 'p' }), { _id: 'p', version: 2, state: 'b' })
  })

  await t.test('updateMany', async (t) => {
    const c = store.collection('many')
    await c.insertMany([
      { _id: 1, g: 'x', n: 1 },
      { _id: 2, g: 'x', n: 2 },
      { _id: 3, g: 'y', n: 3 },
    ])
    const result = await c.updateMany({ g: 'x' }, { $inc: { n: 10 } })
    t.same([result.matchedCount, result.modifiedCount, result.upsertedCount], [2, 2, 0])
    t.same(await c.find({}, { sort: { _id: 1 } }).toArray(), [
      { _id: 1, g: 'x', n: 11 },
      { _id: 2, g: 'x', n: 12 },
      { _id: 3, g: 'y', n: 3 },
    ])
    const partly = await c.updateMany({}, { $set: { n: 3 } })
    t.same([partly.matchedCount, partly.modifiedCount], [3, 2], 'documents already equal are not counted as modified')
  })

  await t.test('upserts', async (t) => {
    const c = store.collection('upserts')
    const inserted = await c.updateOne(
      { key: 'k1', kind: { $eq: 'x' }, n: { $gt: 5 }, $and: [{ 'meta.tenant': 't1' }] },
      { $set: { v: 1 }, $setOnInsert: { created: true } },
      { upsert: true },
    )
    t.same([inserted.matchedCount, inserted.modifiedCount, inserted.upsertedCount], [0, 0, 1])
    t.match(inserted.upsertedId, HEX_ID, 'an upsert without _id gets a generated 24-hex id')
    t.same(
      await c.findOne({ key: 'k1' }),
      { _id: inserted.upsertedId, key: 'k1', kind: 'x', meta: { tenant: 't1' }, v: 1, created: true },
      'equality fields of the filter, the update and $setOnInsert; not the range condition',
    )

    const again = await c.updateOne({ key: 'k1' }, { $set: { v: 1 }, $setOnInsert: { created: false } }, { upsert: true })
    t.same([again.matchedCount, again.modifiedCount, again.upsertedCount, again.upsertedId], [1, 0, 0, null])
    t.equal((await c.findOne({ key: 'k1' }))?.created, true, '$setOnInsert only applies on insert')

    const withId = await c.updateOne({ _id: 'given' }, { $inc: { n: 1 } }, { upsert: true })
    t.equal(withId.upsertedId, 'given')
    t.same(await c.findOne({ _id: 'given' }), { _id: 'given', n: 1 })

    const many = await c.updateMany({ group: 'g' }, { $set: { touched: true } }, { upsert: true })
    t.same([many.matchedCount, many.upsertedCount], [0, 1])
    t.same(await c.countDocuments({ group: 'g', touched: true }), 1)

    const replaced = await c.replaceOne({ _id: 'r1' }, { whole: 'doc' }, { upsert: true })
    t.same([replaced.upsertedCount, replaced.upsertedId], [1, 'r1'])
    t.same(await c.findOne({ _id: 'r1' }), { _id: 'r1', whole: 'doc' })
  })

  await t.test('replaceOne', async (t) => {
    const c = store.collection('replace')
    await c.insertOne({ _id: 'r', a: 1, b: 2 })
    const result = await c.replaceOne({ a: 1 }, { c: 3 })
    t.same([result.matchedCount, result.modifiedCount], [1, 1])
    t.same(await c.findOne({ _id: 'r' }), { _id: 'r', c: 3 }, 'the whole document is replaced, _id kept')
    const same = await c.replaceOne({ _id: 'r' }, { _id: 'r', c: 3 })
    t.same([same.matchedCount, same.modifiedCount], [1, 0])
    await t.rejects(c.replaceOne({ _id: 'r' }, { _id: 'other', c: 4 }), { code: 66 }, '_id cannot change')
    const none = await c.replaceOne({ _id: 'missing' }, { c: 1 })
    t.same([none.matchedCount, none.upsertedCount], [0, 0])
  })

  await t.test('findOneAndUpdate', async (t) => {
    const c = store.collection('fou')
    await c.insertMany([
      { _id: 'j1', status: 'waiting', priority: 2 },
      { _id: 'j2', status: 'waiting', priority: 1 },
      { _id: 'j3', status: 'done', priority: 0 },
    ])
    const before = await c.findOneAndUpdate({ status: 'waiting' }, { $set: { status: 'running' } }, { sort: { priority: 1 } })
    t.same(before, { _id: 'j2', status: 'waiting', priority: 1 }, 'returns the document before the update by default, picked by sort')
    const after = await c.findOneAndUpdate(
      { status: 'waiting' },
      { $set: { status: 'running' }, $inc: { tries: 1 } },
      { returnDocument: 'after' },
    )
    t.same(after, { _id: 'j1', status: 'running', priority: 2, tries: 1 })
    t.same(await c.findOneAndUpdate({ status: 'waiting' }, { $set: { status: 'running' } }), null, 'no match: null')
    t.same(
      await c.findOneAndUpdate(
        { _id: 'j3' },
        { $set: { status: 'again' } },
        { returnDocument: 'after', projection: { status: 1, _id: 0 } },
      ),
      { status: 'again' },
    )

    const upsertAfter = await c.findOneAndUpdate(
      { _id: 'new1' },
      { $set: { status: 'waiting' } },
      { upsert: true, returnDocument: 'after' },
    )
    t.same(upsertAfter, { _id: 'new1', status: 'waiting' })
    const upsertBefore = await c.findOneAndUpdate({ name: 'new2' }, { $setOnInsert: { status: 'waiting' } }, { upsert: true })
    t.same(upsertBefore, null, "an upsert with returnDocument 'before' returns null")
    const created = await c.findOne({ name: 'new2' })
    t.match(created, { name: 'new2', status: 'waiting' })
    t.match(created?._id, HEX_ID)
  })

  await t.test('deleteOne, deleteMany, countDocuments', async (t) => {
    const c = store.collection('deletes')
    await c.insertMany([{ g: 1 }, { g: 1 }, { g: 2 }, { g: 3 }])
    t.equal(await c.countDocuments(), 4)
    t.equal(await c.countDocuments({ g: { $lte: 2 } }), 3)
    t.same((await c.deleteOne({ g: 1 })).deletedCount, 1)
    t.same((await c.deleteOne({ g: 99 })).deletedCount, 0)
    t.same((await c.deleteMany({ g: { $in: [1, 2] } })).deletedCount, 2)
    t.equal(await c.countDocuments(), 1)
    t.same((await c.deleteMany({})).deletedCount, 1)
    t.equal(await c.countDocuments({}), 0)
  })

  await t.test('aggregate', async (t) => {
    const c = store.collection('sales')
    await c.insertMany([
      {
        _id: 1,
        region: 'north',
        items: [
          { sku: 'a', qty: 2 },
          { sku: 'b', qty: 1 },
        ],
        total: 30,
      },
      { _id: 2, region: 'south', items: [{ sku: 'a', qty: 5 }], total: 50 },
      { _id: 3, region: 'north', items: [{ sku: 'c', qty: 1 }], total: 10 },
      { _id: 4, region: 'east', items: [], total: 5 },
    ])
    t.same(
      await c
        .aggregate([
          { $match: { total: { $gte: 10 } } },
          { $group: { _id: '$region', sum: { $sum: '$total' }, n: { $sum: 1 } } },
          { $sort: { _id: 1 } },
        ])
        .toArray(),
      [
        { _id: 'north', sum: 40, n: 2 },
        { _id: 'south', sum: 50, n: 1 },
      ],
    )
    t.same(
      await c
        .aggregate([{ $unwind: '$items' }, { $group: { _id: '$items.sku', qty: { $sum: '$items.qty' } } }, { $sort: { qty: -1, _id: 1 } }])
        .toArray(),
      [
        { _id: 'a', qty: 7 },
        { _id: 'b', qty: 1 },
        { _id: 'c', qty: 1 },
      ],
    )
    t.same(
      await c
        .aggregate([
          { $sort: { total: -1 } },
          { $skip: 1 },
          { $limit: 2 },
          { $project: { _id: 0, region: 1, double: { $multiply: ['$total', 2] } } },
        ])
        .toArray(),
      [
        { region: 'north', double: 60 },
        { region: 'north', double: 20 },
      ],
    )
    t.same(await c.aggregate([{ $match: { region: 'north' } }, { $count: 'n' }]).toArray(), [{ n: 2 }])
    t.same(await c.aggregate([{ $match: { region: 'nowhere' } }, { $count: 'n' }]).toArray(), [])
    const copy = await c.aggregate([{ $match: { _id: 1 } }]).toArray()
    ;(copy[0]?.items as unknown[]).push('mutated')
    t.equal(((await c.findOne({ _id: 1 }))?.items as unknown[]).length, 2, 'aggregate results are copies')
  })

  await t.test('indexes: names, idempotence, unique violations change nothing', async (t) => {
    const c = store.collection('unique')
    t.equal(await c.createIndex({ tenant: 1, key: -1 }), 'tenant_1_key_-1', "MongoDB's default name")
    t.equal(await c.createIndex({ tenant: 1, key: -1 }), 'tenant_1_key_-1', 'creating the same index again is a no-op')
    t.equal(await c.createIndex({ email: 1 }, { unique: true, name: 'email_unique' }), 'email_unique')
    t.equal(await c.createIndex({ email: 1 }, { unique: true, name: 'email_unique' }), 'email_unique')
    await c.createIndex({ tenant: 1, code: 1 }, { unique: true, partialFilterExpression: { code: { $exists: true } } })

    await c.insertMany([
      { _id: 'u1', tenant: 't1', key: 'k', email: 'one@example.com' },
      { _id: 'u2', tenant: 't1', key: 'k', email: 'two@example.com', code: 'A' },
      { _id: 'u3', tenant: 't2', key: 'k', email: 'three@example.com', code: 'A' },
    ])
    const u1 = { _id: 'u1', tenant: 't1', key: 'k', email: 'one@example.com' }

    await t.rejects(c.insertOne({ _id: 'u4', tenant: 't3', email: 'one@example.com' }), { code: 11000 }, 'insertOne')
    await t.rejects(c.updateOne({ _id: 'u1' }, { $set: { email: 'two@example.com', extra: 1 } }), { code: 11000 }, 'updateOne')
    await t.rejects(c.updateOne({ _id: 'none' }, { $set: { email: 'two@example.com' } }, { upsert: true }), { code: 11000 }, 'upsert')
    await t.rejects(c.replaceOne({ _id: 'u1' }, { tenant: 't1', email: 'three@example.com' }), { code: 11000 }, 'replaceOne')
    await t.rejects(c.findOneAndUpdate({ _id: 'u1' }, { $set: { email: 'three@example.com' } }), { code: 11000 }, 'findOneAndUpdate')
    await t.rejects(c.updateOne({ _id: 'u1' }, { $set: { code: 'A' } }), { code: 11000 }, 'compound unique partial index')
    const err = await c.insertOne({ _id: 'u5', tenant: 't5', email: 'two@example.com' }).catch((e: unknown) => e)
    t.match(err, { code: 11000, message: /E11000 duplicate key error/ })

    t.equal(await c.countDocuments(), 3, 'no document was added')
    t.same(await c.findOne({ _id: 'u1' }), u1, 'no document was changed')

    t.ok((await c.updateOne({ _id: 'u1' }, { $set: { code: 'B' } })).modifiedCount === 1, 'a different code in the same tenant is fine')
    t.ok(
      (await c.insertOne({ _id: 'u6', tenant: 't1', email: 'six@example.com' })).acknowledged,
      'documents outside the partial index do not collide',
    )
    await c.deleteOne({ _id: 'u6' })
    await c.updateOne({ _id: 'u1' }, { $unset: { code: '' } })

    await store.close()
    store = await backend.open()
    const reopened = store.collection('unique')
    t.equal(await reopened.countDocuments(), 3, 'after a reopen: still no document added')
    t.same(await reopened.findOne({ _id: 'u1' }), u1, 'after a reopen: no document changed')
    await t.rejects(reopened.insertOne({ tenant: 'tx', email: 'one@example.com' }), { code: 11000 }, 'after a reopen: still enforced')
    t.equal(await reopened.createIndex({ email: 1 }, { unique: true, name: 'email_unique' }), 'email_unique')
  })

  await t.test('dropIndex: a dropped unique index is no longer enforced, also after a reopen; dropping again answers false', async (t) => {
    const c = store.collection('replaced')
    await c.createIndex({ email: 1 }, { unique: true, name: 'email_everywhere' })
    await c.insertOne({ _id: 'a', tenant: 't1', email: 'one@example.com' })
    t.equal(await c.dropIndex('email_everywhere'), true, 'dropped')
    t.equal(await c.dropIndex('email_everywhere'), false, 'nothing left to drop')
    t.equal(await store.collection('never-written').dropIndex('any'), false, 'no such collection')
    await c.createIndex({ tenant: 1, email: 1 }, { unique: true, name: 'email_per_tenant' })
    t.ok((await c.insertOne({ _id: 'b', tenant: 't2', email: 'one@example.com' })).acknowledged, 'another tenant may hold the value')
    await store.close()
    store = await backend.open()
    const reopened = store.collection('replaced')
    t.ok((await reopened.insertOne({ _id: 'c', tenant: 't3', email: 'one@example.com' })).acknowledged, 'after a reopen: still dropped')
    await t.rejects(reopened.insertOne({ _id: 'd', tenant: 't1', email: 'one@example.com' }), { code: 11000 }, 'the new index holds')
  })

  await t.test('a unique index cannot be built over duplicates', async (t) => {
    const c = store.collection('dupes')
    await c.insertMany([{ v: 1 }, { v: 1 }])
    await t.rejects(c.createIndex({ v: 1 }, { unique: true }), { code: 11000 })
    t.ok((await c.insertOne({ v: 1 })).acknowledged, 'no index was left behind')
  })

  await t.test('50 concurrent findOneAndUpdate claims: exactly one wins', async (t) => {
    const c = store.collection('claims')
    await c.insertOne({ _id: 'job', status: 'waiting' })
    const results = await Promise.all(
      Array.from({ length: 50 }, () => c.findOneAndUpdate({ _id: 'job', status: 'waiting' }, { $set: { status: 'running' } })),
    )
    const winners = results.filter((doc) => doc !== null)
    t.equal(winners.length, 1)
    t.same(winners[0], { _id: 'job', status: 'waiting' })
    t.same(await c.findOne({ _id: 'job' }), { _id: 'job', status: 'running' })
  })

  await t.test('applyAtomically: writes across collections apply in order, each seeing the ones before it', async (t) => {
    const orders = store.collection('atomic-orders')
    const stock = store.collection('atomic-stock')
    await stock.insertMany([
      { _id: 's1', sku: 'A', qty: 5 },
      { _id: 's2', sku: 'B', qty: 1 },
      { _id: 's3', sku: 'C', qty: 0 },
    ])
    const generated: Document = { sku: 'A', qty: 2 }
    const results = await store.applyAtomically([
      { collection: 'atomic-orders', kind: 'insertOne', doc: generated },
      { collection: 'atomic-stock', kind: 'updateOne', filter: { _id: 's1', qty: 5 }, update: { $inc: { qty: -2 } }, mustMatch: true },
      { collection: 'atomic-stock', kind: 'updateMany', filter: { qty: { $lte: 3 } }, update: { $set: { low: true } } },
      { collection: 'atomic-stock', kind: 'updateMany', filter: { sku: 'D' }, update: { $set: { qty: 9 } }, upsert: true },
      { collection: 'atomic-stock', kind: 'deleteMany', filter: { qty: 0 } },
    ])
    t.match(generated._id, HEX_ID, "an insert without _id gets a generated id on the caller's document")
    t.match(results[0], { acknowledged: true, insertedId: generated._id })
    t.match(results[1], { matchedCount: 1, modifiedCount: 1 })
    t.match(results[2], { matchedCount: 3, modifiedCount: 3 }, 'the update saw the decrement before it')
    t.match(results[3], { matchedCount: 0, upsertedCount: 1 })
    t.match(results[4], { deletedCount: 1 })
    t.same(await orders.find({}).toArray(), [{ _id: generated._id, sku: 'A', qty: 2 }])
    t.same(
      (await stock.find({}, { sort: { sku: 1 } }).toArray()).map(({ _id: _generatedForD, ...rest }) => rest),
      [
        { sku: 'A', qty: 3, low: true },
        { sku: 'B', qty: 1, low: true },
        { sku: 'D', qty: 9 },
      ],
    )
    t.same(await store.applyAtomically([]), [], 'an empty batch is fine')
  })

  await t.test('applyAtomically: a replacement takes the whole document, inserted by an upsert when none matches', async (t) => {
    const c = store.collection('atomic-replace')
    await c.insertOne({ _id: 'r1', a: 1, b: 2 })
    const results = await store.applyAtomically([
      { collection: 'atomic-replace', kind: 'replaceOne', filter: { _id: 'r1' }, replacement: { a: 5 } },
      { collection: 'atomic-replace', kind: 'replaceOne', filter: { _id: 'r2' }, replacement: { _id: 'r2', c: 1 }, upsert: true },
      { collection: 'atomic-replace', kind: 'replaceOne', filter: { _id: 'r3' }, replacement: { c: 2 } },
      { collection: 'atomic-replace', kind: 'replaceOne', filter: { _id: 'r2' }, replacement: { c: 3 } },
    ])
    t.match(results[0], { matchedCount: 1, modifiedCount: 1 })
    t.match(results[1], { matchedCount: 0, upsertedCount: 1, upsertedId: 'r2' })
    t.match(results[2], { matchedCount: 0, modifiedCount: 0 }, 'no upsert, no match: nothing')
    t.match(results[3], { matchedCount: 1, modifiedCount: 1 }, 'the replacement saw the upsert before it')
    t.same(await documentsById(store, 'atomic-replace'), [
      { _id: 'r1', a: 5 },
      { _id: 'r2', c: 3 },
    ])
  })

  // A standalone MongoDB server has no transactions: there the writes before a failure stay (README).
  const allOrNothing = !(store.kind === 'mongodb' && 'transactions' in store && store.transactions === false)

  await t.test(
    'applyAtomically: a compare-and-set that matches nothing applies none of the batch',
    { skip: allOrNothing ? false : 'standalone MongoDB' },
    async (t) => {
      const c = store.collection('atomic-cas')
      await c.insertOne({ _id: 'i', version: 2, state: 'old' })
      const err = await store
        .applyAtomically([
          { collection: 'atomic-cas-data', kind: 'insertOne', doc: { _id: 'd1', v: 1 } },
          { collection: 'atomic-cas', kind: 'updateOne', filter: { _id: 'i' }, update: { $set: { touched: true } } },
          {
            collection: 'atomic-cas',
            kind: 'updateOne',
            filter: { _id: 'i', version: 1 },
            update: { $set: { state: 'new' }, $inc: { version: 1 } },
            mustMatch: true,
          },
        ])
        .catch((e: unknown) => e)
      t.ok(isUnmatchedWriteError(err), 'UnmatchedWriteError')
      t.match(err, { writeIndex: 2 })
      t.equal(await store.collection('atomic-cas-data').countDocuments(), 0, 'the insert before it was undone')
      t.same(await c.findOne({ _id: 'i' }), { _id: 'i', version: 2, state: 'old' }, 'and the update before it')

      await store.applyAtomically([
        {
          collection: 'atomic-cas',
          kind: 'updateOne',
          filter: { _id: 'i', version: 2 },
          update: { $set: { state: 'new' }, $inc: { version: 1 } },
          mustMatch: true,
        },
        { collection: 'atomic-cas-data', kind: 'insertOne', doc: { _id: 'd1', v: 1 } },
      ])
      t.same(await c.findOne({ _id: 'i' }), { _id: 'i', version: 3, state: 'new' }, 'the compare-and-set that matches applies')
      t.equal(await store.collection('atomic-cas-data').countDocuments(), 1)
    },
  )

  await t.test(
    'applyAtomically: a duplicate key in a later write undoes the earlier ones, also after a reopen',
    { skip: allOrNothing ? false : 'standalone MongoDB' },
    async (t) => {
      const c = store.collection('atomic-dup')
      await c.createIndex({ code: 1 }, { unique: true })
      await c.insertOne({ _id: 'a', code: 'A', n: 1 })
      const err = await store
        .applyAtomically([
          { collection: 'atomic-dup', kind: 'updateOne', filter: { _id: 'a' }, update: { $set: { n: 2 } }, mustMatch: true },
          { collection: 'atomic-dup-other', kind: 'insertOne', doc: { _id: 'o1' } },
          { collection: 'atomic-dup', kind: 'deleteMany', filter: { _id: 'nothing' } },
          { collection: 'atomic-dup', kind: 'insertOne', doc: { _id: 'b', code: 'A' } },
        ])
        .catch((e: unknown) => e)
      t.match(err, { code: 11000 })
      t.same(await c.find({}).toArray(), [{ _id: 'a', code: 'A', n: 1 }], 'the update was undone and the insert never happened')
      t.equal(await store.collection('atomic-dup-other').countDocuments(), 0, "the other collection's insert was undone")
      await c.insertOne({ _id: 'b', code: 'B' })

      await store.close()
      store = await backend.open()
      t.same(
        await documentsById(store, 'atomic-dup'),
        [
          { _id: 'a', code: 'A', n: 1 },
          { _id: 'b', code: 'B' },
        ],
        'after a reopen: the same',
      )
      t.equal(await store.collection('atomic-dup-other').countDocuments(), 0)
    },
  )

  await t.test('listCollections names the collections holding documents', async (t) => {
    await store.collection('only-an-index').createIndex({ a: 1 })
    const names = await store.listCollections()
    t.ok(names.includes('query') && names.includes('unique'), 'collections with documents are listed')
    t.notOk(names.includes('only-an-index'), 'a collection without documents is not')
    t.notOk(names.includes('deletes'), 'nor is one whose documents were all deleted')
    t.same(names, [...names].sort(), 'sorted')
  })

  await t.test('files: a multi-MiB stream round-trips', async (t) => {
    const chunks = Array.from({ length: 80 }, () => randomBytes(64 * 1024)) // 5 MiB
    const expected = createHash('sha256')
    for (const chunk of chunks) expected.update(chunk)
    const stored = await store.files.put(Readable.from(chunks), { fileName: 'report.bin', contentType: 'application/octet-stream' })
    t.equal(stored.size, 5 * 1024 * 1024)

    const file = await store.files.get(stored.storageHandle)
    if (!file) throw new Error('the stored file is missing')
    t.match(file, { size: 5 * 1024 * 1024, fileName: 'report.bin', contentType: 'application/octet-stream' })
    const actual = createHash('sha256')
    for await (const chunk of file.stream) actual.update(chunk as Buffer)
    t.equal(actual.digest('hex'), expected.digest('hex'), 'the same bytes come back')

    t.equal(await store.files.delete(stored.storageHandle), true)
    t.equal(await store.files.get(stored.storageHandle), null, 'gone after delete')
    t.equal(await store.files.delete(stored.storageHandle), false, 'a second delete removes nothing')
    for (const unknown of ['0123456789abcdef01234567', '7d1c0a62-8b0e-4a55-9a4c-3f0f2b6e9d11', 'not a handle', '']) {
      t.equal(await store.files.get(unknown), null, `unknown handle ${JSON.stringify(unknown)}`)
    }
  })

  await t.test('an interrupted upload leaves nothing behind and rejects', async (t) => {
    async function* failing(): AsyncGenerator<Buffer> {
      yield randomBytes(1024)
      throw new Error('client went away')
    }
    await t.rejects(store.files.put(Readable.from(failing()), { fileName: 'x', contentType: 'text/plain' }), /client went away/)
  })
}

t.test('embedded store', (t) => contract(t, embeddedBackend()))

// Every document of every collection goes to the cold tier once its write is durable, so each
// assertion reads, counts, sorts, updates, deletes and uniquely indexes documents SQLite holds alone.
t.test('embedded store, every document cold', (t) =>
  contract(
    t,
    embeddedBackend(() => ({ always: true })),
  ),
)

t.test('remote store (embedded behind a MessagePort)', (t) => contract(t, remoteBackend()))

const mongodbUri = process.env.MONGODB_URI
t.test('MongoDB store', { skip: mongodbUri ? false : 'MONGODB_URI is not set' }, (t) => contract(t, mongoBackend(mongodbUri ?? '')))
