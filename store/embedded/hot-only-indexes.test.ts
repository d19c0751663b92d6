/**
 * A cold rule's `hotOnlyIndexes` (cold-tier.ts): documents going cold get no entries in those
 * indexes in SQLite, by a write or by an index built over cold documents; a read that pins the
 * rule's path to hot values still plans on them in memory, and a read that may match cold documents
 * still finds them, through another index or a scan. A unique or TTL index keeps its cold entries
 * whatever the rule names.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import t from 'tap'
import type { ColdTier } from './cold-tier.js'
import { DATABASE_FILE, EmbeddedStore } from './store.js'
import type { SecondaryIndex } from './secondary-index.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

const INSTANCES = 'instances'
const coldTier: ColdTier = (collection) =>
  collection === INSTANCES
    ? { path: 'status', values: ['completed'], hotOnlyIndexes: ['by_due_date', 'by_inbox', 'by_code', 'by_expiry'] }
    : undefined

function tempDataDir(t: Tap): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-hot-only-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

const instance = (n: number, status: 'running' | 'completed') => ({
  _id: `i${String(n).padStart(2, '0')}`,
  status,
  code: `C${n}`,
  app: 'hr',
  started: n,
  // Ended instances keep a due date here, so that a read which may match them shows they are still found.
  dueAt: new Date(Date.UTC(2026, 0, 1 + n)),
  inbox: status === 'running' ? [`user:u${n % 2}`] : [],
})

/** The cold entries SQLite holds per index of the collection. */
function coldKeyCounts(dataDir: string): Record<string, number> {
  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true })
  try {
    const rows = db
      .prepare<[string], { idx: string; n: number }>('SELECT idx, count(*) AS n FROM cold_keys WHERE collection = ? GROUP BY idx')
      .all(INSTANCES)
    return Object.fromEntries(rows.map((row) => [row.idx, row.n]))
  } finally {
    db.close()
  }
}

async function createIndexes(store: EmbeddedStore): Promise<void> {
  const instances = store.collection(INSTANCES)
  await instances.createIndex({ app: 1, dueAt: 1 }, { name: 'by_due_date' })
  await instances.createIndex({ app: 1, inbox: 1, started: -1 }, { name: 'by_inbox' })
  await instances.createIndex({ app: 1, started: -1 }, { name: 'by_start' })
  await instances.createIndex({ code: 1 }, { name: 'by_code', unique: true })
  await instances.createIndex({ dueAt: 1 }, { name: 'by_expiry', expireAfterSeconds: 10 * 365 * 86_400 })
}

const ids = (docs: Array<{ _id?: unknown }>) => docs.map((doc) => doc._id)

async function checkReads(t: Tap, store: EmbeddedStore): Promise<void> {
  const instances = store.collection(INSTANCES)
  const dueBy = new Date(Date.UTC(2026, 0, 5))
  const reads = store.coldTierReads
  t.same(
    ids(await instances.find({ app: 'hr', dueAt: { $lte: dueBy }, status: { $nin: ['completed'] } }, { sort: { dueAt: 1 } }).toArray()),
    ['i00', 'i01'],
    'a read pinned to hot values finds the running instances due by then',
  )
  t.same(
    ids(await instances.find({ app: 'hr', inbox: 'user:u1', status: 'running' }).toArray()),
    ['i01'],
    'and the running instances in an inbox',
  )
  t.equal(store.coldTierReads, reads, 'neither read went to SQLite')
  t.same(
    ids(await instances.find({ app: 'hr', dueAt: { $lte: dueBy } }, { sort: { dueAt: 1 } }).toArray()),
    ['i00', 'i01', 'i02', 'i03', 'i04'],
    'a read that may match ended instances still finds them, without the entries it has no use for',
  )
  t.same(ids(await instances.find({ code: 'C3' }).toArray()), ['i03'], 'the unique index named by the rule still finds a cold document')
  await t.rejects(instances.insertOne({ ...instance(3, 'running'), _id: 'other' }), { code: 11000 }, 'and still refuses its key')
}

t.test('documents going cold by a write get no entries in the hot-only indexes', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => store.close())
  await createIndexes(store)
  await store.collection(INSTANCES).insertMany(Array.from({ length: 8 }, (_, n) => instance(n, n < 2 ? 'running' : 'completed')))
  t.equal(store.hotDocuments(INSTANCES), 2, 'the ended instances left memory')
  t.same(
    coldKeyCounts(dataDir),
    { by_start: 6, by_code: 6, by_expiry: 6 },
    'SQLite holds their entries of every index but the hot-only ones (unique and TTL indexes keep theirs)',
  )
  await checkReads(t, store)
})

t.test('an index created over cold documents gets no cold entries when it is hot-only, and the rule holds after a reopen', async (t) => {
  const dataDir = tempDataDir(t)
  const first = EmbeddedStore.open({ dataDir, coldTier })
  await first.collection(INSTANCES).insertMany(Array.from({ length: 8 }, (_, n) => instance(n, n < 2 ? 'running' : 'completed')))
  await createIndexes(first)
  t.same(coldKeyCounts(dataDir), { by_start: 6, by_code: 6, by_expiry: 6 }, 'the indexes built over the cold documents')
  await first.close()

  const second = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => second.close())
  await checkReads(t, second)
  await second.collection(INSTANCES).updateOne({ _id: 'i00' }, { $set: { status: 'completed', inbox: [] } })
  t.same(coldKeyCounts(dataDir), { by_start: 7, by_code: 7, by_expiry: 7 }, 'an instance ending after the reopen gets the same entries')
})

t.test(
  'an instance that ends leaves no entry behind in memory in the hot-only indexes, whether they had caught up with it or not',
  async (t) => {
    const store = EmbeddedStore.open({ dataDir: tempDataDir(t), coldTier })
    t.teardown(() => store.close())
    await createIndexes(store)
    const instances = store.collection(INSTANCES)
    await instances.insertMany([instance(0, 'running'), instance(1, 'running')])
    // A read on the deferred indexes brings them up to date with both running instances.
    t.same(ids(await instances.find({ app: 'hr', inbox: 'user:u1', status: 'running' }).toArray()), ['i01'])
    // i01 ends while a read catches the indexes up with its ended version, before it leaves memory once durable.
    const ending = instances.updateOne({ _id: 'i01' }, { $set: { status: 'completed', inbox: [] } })
    t.same(ids(await instances.find({ app: 'hr', inbox: 'user:u0', status: 'running' }).toArray()), ['i00'])
    await ending
    // i00 ends with the indexes behind on it: they hold an earlier version's entries.
    await instances.updateOne({ _id: 'i00' }, { $set: { inbox: ['user:u0', 'swimlane:hr'] } })
    await instances.updateOne({ _id: 'i00' }, { $set: { status: 'completed', inbox: [] } })
    t.equal(store.hotDocuments(INSTANCES), 0, 'both left memory')
    // What each index of the collection holds in memory (the store's internals: no read shows a stale
    // entry, since every candidate is checked against the filter, but it would stay in memory for good).
    const table = (store as unknown as { table(name: string): { indexByName: Map<string, SecondaryIndex> } }).table(INSTANCES)
    const held = Object.fromEntries([...table.indexByName].map(([name, index]) => [name, index.idsWithin({ prefixes: [''], fields: 0 })]))
    t.same(held, { by_due_date: [], by_inbox: [], by_start: [], by_code: [], by_expiry: [] })
  },
)
