/**
 * The cold tier's filters fill after the open (cold-filters.ts): until a filter is full it sends
 * every question to SQLite, a value made cold meanwhile is in it once full, and a fill that fails or
 * is no longer wanted stops without leaving a wrong answer behind.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { waitUntil } from '../../services/testing/wait.js'
import { ColdFilters, type ValuePage } from './cold-filters.js'
import type { ColdTier } from './cold-tier.js'
import { EmbeddedStore } from './store.js'

/** The values SQLite would hold, read `limit` at a time after a cursor, counting the pages read. */
function pagesOf(values: string[]): { page: ValuePage<string>; pagesRead: () => number } {
  const sorted = [...values].sort()
  let pagesRead = 0
  const page: ValuePage<string> = (after, limit) => {
    pagesRead++
    return sorted
      .filter((value) => after === undefined || value > after)
      .slice(0, limit)
      .map((value) => ({ value, cursor: value }))
  }
  return { page, pagesRead: () => pagesRead }
}

const STORED = ['b1', 'b2', 'b3', 'b4']
/** Enough values, a page each, for a fill to be still going when the test acts in it. */
const MANY_STORED = Array.from({ length: 2000 }, (_, i) => `b${String(i).padStart(4, '0')}`)
const NEVER_STORED = Array.from({ length: 50 }, (_, i) => `fresh-${i}`)

t.test('a filter says maybe to everything until it is full, then rules out what SQLite does not hold', async (t) => {
  const filters = new ColdFilters(1)
  const { page, pagesRead } = pagesOf(STORED)
  filters.trackStored('ids', STORED.length, page)
  t.equal(pagesRead(), 0, 'nothing is read at the open itself')
  t.ok(
    NEVER_STORED.every((value) => filters.mayHold('ids', value)),
    'while filling, every question goes to SQLite',
  )
  await filters.filled()
  t.equal(pagesRead(), STORED.length + 1, 'a page at a time, the last one short')
  t.ok(
    STORED.every((value) => filters.mayHold('ids', value)),
    'every stored value may be held',
  )
  t.ok(NEVER_STORED.filter((value) => filters.mayHold('ids', value)).length <= 2, 'values never stored are ruled out (bar false positives)')
})

t.test('a value made cold while its filter fills is in it once full, though the pages had passed its place', async (t) => {
  const filters = new ColdFilters(1)
  const { page, pagesRead } = pagesOf(MANY_STORED)
  filters.trackStored('ids', MANY_STORED.length, page)
  await waitUntil(pagesRead, (read) => read >= 2)
  // 'a0' sorts before the pages' cursor: only the write's own `add` can put it in the filter.
  filters.add('ids', 'a0')
  await filters.filled()
  t.ok(filters.mayHold('ids', 'a0'))
})

t.test('a filter dropped while it fills stops reading; one whose page fails stays a maybe', async (t) => {
  const filters = new ColdFilters(1)
  const dropped = pagesOf(MANY_STORED)
  filters.trackStored('dropped', MANY_STORED.length, dropped.page)
  filters.trackStored('failing', 0, () => {
    throw new Error('the file is gone')
  })
  const readAtDrop = await waitUntil(dropped.pagesRead, (read) => read >= 1)
  filters.untrack('dropped')
  await filters.filled()
  t.ok(readAtDrop < MANY_STORED.length, 'dropped while filling')
  t.equal(dropped.pagesRead(), readAtDrop, 'no page after the drop')
  t.ok(filters.mayHold('failing', 'anything'), 'a failed fill answers maybe: SQLite decides')
  t.ok(filters.mayHold('dropped', 'anything'), 'so does a dropped filter')
})

t.test('closing stops the fill', async (t) => {
  const filters = new ColdFilters(1)
  const { page, pagesRead } = pagesOf(STORED)
  filters.trackStored('ids', STORED.length, page)
  filters.close()
  await filters.filled()
  t.equal(pagesRead(), 0)
})

t.test('a store serves before its filters are full, exactly: held ids and keys refused, fresh ones stored', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'store-cold-filters-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const everyBookingCold: ColdTier = (collection) => (collection === 'bookings' ? { always: true } : undefined)
  const first = EmbeddedStore.open({ dataDir, coldTier: everyBookingCold })
  await first.collection('bookings').createIndex({ businessKey: 1 }, { unique: true })
  await first.collection('bookings').insertMany(Array.from({ length: 20 }, (_, n) => ({ _id: `b${n}`, businessKey: `LR-${n}` })))
  await first.close()

  const store = EmbeddedStore.open({ dataDir, coldTier: everyBookingCold })
  t.teardown(() => store.close())
  const bookings = store.collection('bookings')
  // Not awaited before these: the filters are still filling.
  await t.rejects(bookings.insertOne({ _id: 'b3', businessKey: 'LR-new' }), { code: 11000 }, 'a cold id is refused')
  await t.rejects(bookings.insertOne({ _id: 'new', businessKey: 'LR-4' }), { code: 11000 }, 'a cold key is refused')
  t.same(await bookings.findOne({ businessKey: 'LR-7' }), { _id: 'b7', businessKey: 'LR-7' }, 'a cold key is found')
  await bookings.insertOne({ _id: 'b20', businessKey: 'LR-20' })
  await store.coldFiltersFilled()
  const reads = store.coldTierReads
  t.equal(await bookings.findOne({ businessKey: 'LR-99' }), null)
  t.equal(store.coldTierReads, reads, 'once full, a fresh key leaves SQLite alone')
  await t.rejects(bookings.insertOne({ businessKey: 'LR-20' }), { code: 11000 }, 'the booking stored while filling holds its key')
})
