import t from 'tap'
import type { SortSpec, Store } from '../../../store/port.js'
import { openTestStore } from '../../testing/harness.js'
import { UnitOfWork } from './unit-of-work.js'

const LEDGER = 'ledger'

/** What the store itself holds, whatever a unit of work has seen so far. */
function committedLedger(store: Store, sort: SortSpec = { _id: 1 }) {
  return store.collection(LEDGER).find({}, { sort }).toArray()
}

t.test('reads in the run see its own writes; nothing reaches the store until the writes are applied', async (t) => {
  const store = await openTestStore(t)
  const before = [
    { _id: 'a', n: 1 },
    { _id: 'b', n: 2 },
    { _id: 'c', n: 3 },
  ]
  await store.collection(LEDGER).insertMany(structuredClone(before))
  const work = new UnitOfWork(store)

  const inserted = await work.insert(LEDGER, { n: 4 }, [])
  t.same((await work.find(LEDGER, { n: { $gte: 3 } }, 10)).map((doc) => doc.n).sort(), [3, 4], 'a find sees the insert')
  t.match(
    await work.update(LEDGER, { n: { $gte: 2 } }, { big: true }, false, []),
    { matchedCount: 3, modifiedCount: 3, upsertedId: null },
    'an update matches committed and own documents',
  )
  t.equal(await work.delete(LEDGER, { _id: 'b' }), 1)
  t.same(
    (await work.find(LEDGER, { big: true }, 10)).map((doc) => doc._id).sort(),
    ['c', inserted].sort(),
    'the deleted one is gone, the updated ones show their change',
  )
  const upsert = await work.update(LEDGER, { kind: 'total' }, { n: 10 }, true, [])
  t.match(
    await work.find(LEDGER, { kind: 'total' }, 10),
    [{ _id: upsert.upsertedId, kind: 'total', n: 10 }],
    'an upsert is seen with the id it reported',
  )
  t.equal(await work.find(LEDGER, {}, 2).then((docs) => docs.length), 2, 'the limit holds across committed and own documents')

  t.same(await committedLedger(store), before, 'the store is untouched so far')
  await work.applyAlone()
  t.same(
    await committedLedger(store, { n: 1 }),
    [
      { _id: 'a', n: 1 },
      { _id: 'c', n: 3, big: true },
      { _id: inserted, n: 4, big: true },
      { _id: upsert.upsertedId, kind: 'total', n: 10 },
    ],
    'applied, the store holds what the run saw',
  )
})

t.test('duplicates fail the write at once: an explicit _id, a unique key against committed and own documents', async (t) => {
  const store = await openTestStore(t)
  await store.collection(LEDGER).createIndex({ code: 1 }, { unique: true })
  await store.collection(LEDGER).insertOne({ _id: 'a', code: 'A' })
  const work = new UnitOfWork(store)
  const unique = [['code']]
  await t.rejects(work.insert(LEDGER, { _id: 'a' }, unique), { code: 11000 })
  await t.rejects(work.insert(LEDGER, { code: 'A' }, unique), { code: 11000 })
  await work.insert(LEDGER, { code: 'B' }, unique)
  await t.rejects(work.insert(LEDGER, { code: 'B' }, unique), { code: 11000 }, "against the run's own insert")
  await t.rejects(work.update(LEDGER, {}, { code: 'C' }, false, unique), { code: 11000 }, 'two documents updated to one key')
  t.match(
    await work.update(LEDGER, { code: 'B' }, { code: 'B', seen: true }, false, unique),
    { modifiedCount: 1 },
    'a document keeping its own key is no duplicate',
  )
  await work.applyAlone()
  t.equal(await store.collection(LEDGER).countDocuments(), 2)
})

t.test('discardSince forgets the writes after a mark, in the overlay too', async (t) => {
  const store = await openTestStore(t)
  await store.collection(LEDGER).insertOne({ _id: 'a', n: 1 })
  const work = new UnitOfWork(store)
  await work.insert(LEDGER, { _id: 'kept', n: 2 }, [])
  const mark = work.mark()
  await work.insert(LEDGER, { _id: 'dropped', n: 3 }, [])
  await work.update(LEDGER, { _id: 'kept' }, { n: 20 }, false, [])
  await work.delete(LEDGER, { _id: 'a' })
  work.discardSince(mark)
  const kept = [
    { _id: 'a', n: 1 },
    { _id: 'kept', n: 2 },
  ]
  t.same(
    (await work.find(LEDGER, {}, 10)).sort((x, y) => String(x._id).localeCompare(String(y._id))),
    kept,
  )
  t.equal(work.writes().length, 1)
  await work.applyAlone()
  t.same(await committedLedger(store), kept)
})

t.test("refusedBy names the written collection a store's duplicate key names, from either store", async (t) => {
  const store = await openTestStore(t)
  await store.collection(LEDGER).createIndex({ code: 1 }, { unique: true })
  const work = new UnitOfWork(store)
  await work.insert(LEDGER, { code: 'A' }, [['code']])
  await store.collection(LEDGER).insertOne({ code: 'A' })
  const refusal = await work.applyAlone().then(
    () => undefined,
    (error: unknown) => error,
  )
  t.equal(work.refusedBy(refusal), LEDGER, "the embedded store's duplicate key")
  // A MongoDB server names the collection with its database in front.
  const server = Object.assign(
    new Error(`E11000 duplicate key error collection: workflow.${LEDGER} index: code_1 dup key: { code: "A" }`),
    {
      code: 11000,
    },
  )
  t.equal(work.refusedBy(server), LEDGER, "a MongoDB server's duplicate key")
  const elsewhere = Object.assign(new Error('E11000 duplicate key error collection: workflow.contexts index: _id_ dup key: { _id: "x" }'), {
    code: 11000,
  })
  t.equal(work.refusedBy(elsewhere), undefined, 'a collection the run did not write')
  t.equal(work.refusedBy(new Error(`${LEDGER} index: code_1`)), undefined, 'not a duplicate key')
})
