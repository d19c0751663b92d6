/**
 * The filter of a unique index's cold keys (cold-file.ts `trackKeys`): a read or an insert of a whole
 * key that no cold document holds leaves SQLite alone, and one that a cold document holds is still
 * found and refused, whichever way the key reached the cold tier (a write, the open of an older data
 * dir, an index created over cold documents, a reopen). Also the service's rule that tenants' data
 * collections are cold once durable (store/collections.ts `coldRuleOf`).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { dataCollectionName } from '../tenant.js'
import type { ColdTier } from './cold-tier.js'
import { EmbeddedStore } from './store.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const BOOKINGS = 'bookings'
const everyBookingCold: ColdTier = (collection) => (collection === BOOKINGS ? { always: true } : undefined)
const keptInMemory: ColdTier = () => undefined

function tempDataDir(t: Tap): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-cold-keys-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function opened(t: Tap, dataDir: string, coldTier: ColdTier): EmbeddedStore {
  const store = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => store.close())
  return store
}

const booking = (n: number) => ({ _id: `b${n}`, businessKey: `LR-${n}`, days: n })

/**
 * What a booking's writer does (services/engine/flow-host/unit-of-work.ts): looks its key up, then
 * inserts it. Neither may read SQLite for a key no cold booking holds; a held one is found and refused.
 */
async function checkKeys(t: Tap, store: EmbeddedStore, held: number[], fresh: number): Promise<void> {
  // The filters fill after the open (cold-filters.ts); until then these reads would go to SQLite.
  await store.coldFiltersFilled()
  const bookings = store.collection(BOOKINGS)
  const reads = store.coldTierReads
  t.equal(await bookings.findOne({ businessKey: `LR-${fresh}` }), null, 'a fresh key is not found')
  t.same(await bookings.find({ businessKey: { $in: [`LR-${fresh}`, `LR-${fresh + 1000}`] } }).toArray(), [], 'nor a list of them')
  await bookings.insertOne(booking(fresh))
  t.equal(store.coldTierReads, reads, 'the read, the insert and its uniqueness check left SQLite alone')
  t.equal(store.hotDocuments(BOOKINGS), 0, 'every booking is cold')
  for (const n of held) {
    t.same(await bookings.findOne({ businessKey: `LR-${n}` }), booking(n), `LR-${n}, cold, is found by its key`)
    await t.rejects(bookings.insertOne({ businessKey: `LR-${n}` }), { code: 11000 }, `and a second LR-${n} is refused`)
  }
  await t.rejects(bookings.insertOne({ businessKey: `LR-${fresh}` }), { code: 11000 }, 'the booking just inserted holds its key too')
}

t.test('keys of documents made cold by writes are filtered, before and after a reopen', async (t) => {
  const dataDir = tempDataDir(t)
  const first = opened(t, dataDir, everyBookingCold)
  await first.collection(BOOKINGS).createIndex({ businessKey: 1 }, { unique: true })
  await first.collection(BOOKINGS).insertMany([booking(1), booking(2)])
  await checkKeys(t, first, [1, 2], 3)
  await first.close()
  await checkKeys(t, opened(t, dataDir, everyBookingCold), [1, 2, 3], 4)
})

t.test('keys of documents an older data dir kept in memory are filtered once the open makes them cold', async (t) => {
  const dataDir = tempDataDir(t)
  const before = opened(t, dataDir, keptInMemory)
  await before.collection(BOOKINGS).createIndex({ businessKey: 1 }, { unique: true })
  await before.collection(BOOKINGS).insertMany([booking(1), booking(2)])
  t.equal(before.hotDocuments(BOOKINGS), 2, 'without the rule, the bookings are in memory')
  await before.close()
  await checkKeys(t, opened(t, dataDir, everyBookingCold), [1, 2], 3)
})

t.test('a unique index created over cold documents filters their keys', async (t) => {
  const store = opened(t, tempDataDir(t), everyBookingCold)
  await store.collection(BOOKINGS).insertMany([booking(1), booking(2)])
  await store.collection(BOOKINGS).createIndex({ businessKey: 1 }, { unique: true })
  await checkKeys(t, store, [1, 2], 3)
})

t.test('an index dropped and created again filters the keys of the documents it finds then', async (t) => {
  const store = opened(t, tempDataDir(t), everyBookingCold)
  const bookings = store.collection(BOOKINGS)
  await bookings.createIndex({ businessKey: 1 }, { unique: true })
  await bookings.insertMany([booking(1), booking(2)])
  await bookings.dropIndex('businessKey_1')
  // Without the index, a second LR-5 is allowed: the index created later must refuse to exist.
  await bookings.insertMany([booking(5), { _id: 'again', businessKey: 'LR-5' }])
  await t.rejects(
    bookings.createIndex({ businessKey: 1 }, { unique: true }),
    { code: 11000 },
    'the duplicate keeps the index from being made',
  )
  await bookings.deleteOne({ _id: 'again' })
  await bookings.createIndex({ businessKey: 1 }, { unique: true })
  await checkKeys(t, store, [1, 2, 5], 6)
})

t.test("a tenant's data collection is cold once durable, found by its unique key, and its duplicates refused", async (t) => {
  const dataDir = tempDataDir(t)
  const collection = dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings')
  const open = (): EmbeddedStore => EmbeddedStore.open({ dataDir })
  const first = open()
  await first.collection(collection).createIndex({ businessKey: 1 }, { unique: true })
  await first.collection(collection).insertMany([booking(1), booking(2)])
  t.equal(first.hotDocuments(collection), 0, 'no booking stays in memory')
  await t.rejects(first.collection(collection).insertOne({ businessKey: 'LR-1' }), { code: 11000 })
  await first.collection(collection).updateOne({ businessKey: 'LR-2' }, { $set: { days: 5 } })
  t.equal(first.hotDocuments(collection), 0, 'an updated booking leaves memory again')
  await first.close()
  const reopened = open()
  t.teardown(() => reopened.close())
  t.same(
    await reopened
      .collection(collection)
      .find({}, { sort: { _id: 1 } })
      .toArray(),
    [booking(1), { ...booking(2), days: 5 }],
  )
  t.equal(reopened.hotDocuments('users'), 0, 'other collections are as they were')
})
