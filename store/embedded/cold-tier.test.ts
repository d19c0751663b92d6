/**
 * The cold tier of the embedded store (cold-tier.ts): documents a rule calls cold leave memory once
 * durable and are still found by every query shape, counted, sorted, updated, deleted and uniquely
 * indexed; filters that only hot documents can match never touch SQLite; writes stay atomic; a data
 * dir written before the cold tier opens and is moved to it, and one written before `documents` was a
 * rowid table opens with the table rebuilt once. The contract suite (store/contract.test.ts)
 * also runs whole with every document cold.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import t from 'tap'
import type { Document } from '../port.js'
import { BUILD_BATCH } from './cold-index-build.js'
import type { ColdTier } from './cold-tier.js'
import { DATABASE_FILE, EmbeddedStore } from './store.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/**
 * The same documents and indexes written by scripts/upgrade/make-layout-fixture.mjs with the embedded
 * store of the release before the cold tier (commit ea9b35c, layout 1), and of the release before
 * `documents` was a rowid table (commit 96e5b7e, layout 2: the ended ones already cold).
 */
const LAYOUT_1 = fileURLToPath(new URL('../../../store/fixtures/layout-before-cold-tier', import.meta.url))
const LAYOUT_2 = fileURLToPath(new URL('../../../store/fixtures/layout-before-rowid', import.meta.url))

const ENDED = ['completed', 'cancelled']
/** The service's rule for instances, on a collection of the test's own. */
const coldTier: ColdTier = (collection) => (collection === 'instances' ? { path: 'status', values: ENDED } : undefined)

function tempDataDir(t: Tap): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-cold-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

function instance(i: number, status: string, extra: Document = {}): Document {
  return {
    _id: `i${String(i).padStart(2, '0')}`,
    status,
    n: i,
    code: `C${i}`,
    when: new Date(Date.UTC(2025, 0, 1 + i)),
    tags: i % 2 === 0 ? ['even', `t${i}`] : `t${i}`,
    ...extra,
  }
}

const ids = (docs: Document[]): unknown[] => docs.map((doc) => doc._id)

async function seeded(t: Tap, dataDir = tempDataDir(t)): Promise<EmbeddedStore> {
  const store = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => store.close())
  const c = store.collection('instances')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.createIndex({ status: 1, when: 1 })
  await c.createIndex({ tags: 1, n: 1 })
  // i00..i09: every third running, the others ended.
  await c.insertMany(Array.from({ length: 10 }, (_, i) => instance(i, i % 3 === 0 ? 'running' : (ENDED[i % 2] as string))))
  return store
}

t.test('ended documents leave memory once durable; every query shape still finds them', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')
  t.equal(store.hotDocuments('instances'), 4, 'only the running instances stay in memory')

  t.same(ids(await c.find({}, { sort: { _id: 1 } }).toArray()), ['i00', 'i01', 'i02', 'i03', 'i04', 'i05', 'i06', 'i07', 'i08', 'i09'])
  t.same((await c.findOne({ _id: 'i01' }))?.when, new Date(Date.UTC(2025, 0, 2)), 'by _id, Dates intact')
  t.same(ids(await c.find({ _id: { $in: ['i01', 'i03', 'nope'] } }).toArray()).sort(), ['i01', 'i03'], '_id $in')
  t.same(ids(await c.find({ code: 'C5' }).toArray()), ['i05'], 'equality on an index')
  t.same(ids(await c.find({ code: { $in: ['C2', 'C3'] } }, { sort: { n: -1 } }).toArray()), ['i03', 'i02'], '$in, sorted')
  t.same(
    ids(
      await c.find({ status: 'completed', when: { $gte: new Date(Date.UTC(2025, 0, 3)), $lt: new Date(Date.UTC(2025, 0, 9)) } }).toArray(),
    ).sort(),
    ['i02', 'i04'],
    'a Date range after an equality prefix',
  )
  t.same(ids(await c.find({ n: { $gt: 6 } }, { sort: { n: 1 } }).toArray()), ['i07', 'i08', 'i09'], 'no usable index: a scan')
  t.same(ids(await c.find({ tags: 'even', n: { $lte: 4 } }, { sort: { n: 1 } }).toArray()), ['i00', 'i02', 'i04'], 'multikey')
  t.same(
    ids(await c.find({ status: { $in: ENDED } }, { sort: { when: -1 }, skip: 1, limit: 2 }).toArray()),
    ['i07', 'i05'],
    'sort, skip, limit',
  )
  t.same(
    await c.findOne({ status: 'cancelled' }, { sort: { n: -1 }, projection: { _id: 0, n: 1 } }),
    { n: 7 },
    'findOne with sort and projection',
  )
  t.equal(await c.countDocuments(), 10, 'count of all')
  t.equal(await c.countDocuments({ status: 'completed' }), 3, 'count by filter')
  t.same(
    await c
      .aggregate([{ $match: { status: { $ne: 'running' } } }, { $group: { _id: '$status', count: { $sum: 1 } } }, { $sort: { _id: 1 } }])
      .toArray(),
    [
      { _id: 'cancelled', count: 3 },
      { _id: 'completed', count: 3 },
    ],
    'aggregate',
  )
  t.same(await store.listCollections(), ['instances'])
})

t.test('a filter only hot documents can match never reads SQLite; others do', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')
  const before = store.coldTierReads
  t.equal((await c.find({ status: 'running' }).toArray()).length, 4)
  t.equal(await c.countDocuments({ status: { $nin: ENDED }, n: { $gte: 0 } }), 4)
  t.equal(await c.countDocuments({ $and: [{ status: { $in: ['running', 'waiting'] } }] }), 4)
  await c.updateOne({ _id: 'i03', status: 'running' }, { $inc: { n: 100 } })
  t.ok((await c.findOne({ _id: 'i00' })) !== null, 'a hot document by _id')
  t.equal(store.coldTierReads, before, 'no SQLite read for any of them')
  await c.findOne({ code: 'C1' })
  t.ok(store.coldTierReads > before, 'a filter that can match a cold document reads SQLite')
})

t.test('writes to cold documents: updates, reopening, deletes, uniqueness, and reads right after', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')

  t.same(await c.updateOne({ _id: 'i01' }, { $set: { note: 'late' } }), {
    acknowledged: true,
    matchedCount: 1,
    modifiedCount: 1,
    upsertedCount: 0,
    upsertedId: null,
  })
  t.equal((await c.findOne({ code: 'C1' }))?.note, 'late', 'a cold document updated (and cold again once durable)')
  t.equal(store.hotDocuments('instances'), 4)

  await c.updateOne({ _id: 'i02' }, { $set: { status: 'running' } })
  t.equal(store.hotDocuments('instances'), 5, 'reopened: back in memory')
  t.same(ids(await c.find({ status: 'running' }, { sort: { _id: 1 } }).toArray()), ['i00', 'i02', 'i03', 'i06', 'i09'])
  await c.updateOne({ _id: 'i00' }, { $set: { status: 'cancelled' } })
  t.equal(store.hotDocuments('instances'), 4, 'ended: leaves memory once durable')
  t.same(
    ids(await c.find({ status: 'cancelled', when: { $lt: new Date(Date.UTC(2025, 0, 2)) } }).toArray()),
    ['i00'],
    'found by its new entries',
  )

  await t.rejects(c.insertOne(instance(1, 'completed', { code: 'new' })), { code: 11000 }, 'a cold _id is taken')
  await t.rejects(
    c.insertMany([instance(21, 'running'), instance(8, 'completed', { code: 'other' })]),
    { code: 11000 },
    'a cold _id among several inserted ones',
  )
  t.equal(await c.countDocuments({ _id: 'i21' }), 0, 'and nothing of them is inserted')
  await t.rejects(c.insertOne(instance(20, 'running', { code: 'C5' })), { code: 11000 }, 'a cold unique value is taken')
  await t.rejects(c.updateOne({ _id: 'i03' }, { $set: { code: 'C7' } }), { code: 11000 }, 'and cannot be updated to')
  // Swapping unique values between a cold and a hot document in one write is no conflict.
  await store.applyAtomically([
    { collection: 'instances', kind: 'updateOne', filter: { _id: 'i07' }, update: { $set: { code: 'tmp' } } },
    { collection: 'instances', kind: 'updateOne', filter: { _id: 'i03' }, update: { $set: { code: 'C7' } } },
    { collection: 'instances', kind: 'updateOne', filter: { _id: 'i07' }, update: { $set: { code: 'C3' } } },
  ])
  t.same(ids(await c.find({ code: { $in: ['C3', 'C7'] } }, { sort: { code: 1 } }).toArray()), ['i07', 'i03'])

  // Not awaited: the reads run while the writes are not durable yet.
  const deleting = c.deleteOne({ _id: 'i04' })
  const inserting = c.insertOne(instance(30, 'completed'))
  t.equal(await c.findOne({ _id: 'i04' }), null, 'a delete hides the cold copy at once')
  t.equal(await c.countDocuments({ code: 'C30' }), 1, 'an insert is read before it is durable')
  await Promise.all([deleting, inserting])
  t.equal(await c.findOne({ _id: 'i04' }), null)
  t.equal(await c.countDocuments({ code: 'C30' }), 1, 'and after, from SQLite')
  t.equal(store.hotDocuments('instances'), 4)

  t.same(await c.deleteMany({ status: { $in: ENDED }, n: { $lt: 6 } }), { acknowledged: true, deletedCount: 3 }, 'i00, i01, i05')
  t.same(ids(await c.find({}, { sort: { _id: 1 } }).toArray()), ['i02', 'i03', 'i06', 'i07', 'i08', 'i09', 'i30'])
  t.equal(await c.countDocuments(), 7)
  t.same(await c.updateMany({ status: 'completed' }, { $set: { archived: true } }), {
    acknowledged: true,
    matchedCount: 2,
    modifiedCount: 2,
    upsertedCount: 0,
    upsertedId: null,
  })
  t.same(ids(await c.find({ archived: true }, { sort: { _id: 1 } }).toArray()), ['i08', 'i30'])
})

t.test('cold documents and their indexes survive a reopen; start-up reads only the hot rows', async (t) => {
  const dataDir = tempDataDir(t)
  const first = EmbeddedStore.open({ dataDir, coldTier })
  const c = first.collection('instances')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.insertMany(Array.from({ length: 10 }, (_, i) => instance(i, i < 2 ? 'running' : 'completed')))
  await first.close()

  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true })
  t.same(
    db.prepare('SELECT cold, count(*) AS n FROM documents GROUP BY cold ORDER BY cold').all(),
    [
      { cold: 0, n: 2 },
      { cold: 1, n: 8 },
    ],
    'the running instances are the hot rows',
  )
  db.close()

  const second = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => second.close())
  t.equal(second.hotDocuments('instances'), 2)
  const again = second.collection('instances')
  t.equal(await again.countDocuments({ status: 'completed' }), 8)
  t.same(ids(await again.find({ code: { $in: ['C9', 'C0'] } }, { sort: { _id: 1 } }).toArray()), ['i00', 'i09'])
  await t.rejects(again.insertOne(instance(40, 'running', { code: 'C9' })), { code: 11000 }, 'uniqueness holds across the reopen')
})

t.test('indexes created over cold documents cover them; a unique one that they break is refused', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')
  await c.createIndex({ n: 1 })
  const before = store.coldTierReads
  t.same(ids(await c.find({ n: { $gte: 4, $lt: 6 } }, { sort: { n: 1 } }).toArray()), ['i04', 'i05'])
  t.ok(store.coldTierReads - before <= 2, 'one range read answers it')
  for (let i = 0; i < 10; i++) await c.updateOne({ n: i }, { $set: { twin: i === 2 ? 'i01' : `i${String(i).padStart(2, '0')}` } })
  await t.rejects(c.createIndex({ twin: 1 }, { unique: true }), { code: 11000 }, 'two cold documents share a value')
  await c.updateOne({ _id: 'i02' }, { $set: { twin: 'i02' } })
  await c.createIndex({ twin: 1 }, { unique: true })
  await t.rejects(c.insertOne(instance(50, 'running', { twin: 'i05' })), { code: 11000 }, 'and now it holds against them')
  t.ok(await c.dropIndex('n_1'))
  t.same(ids(await c.find({ n: { $gte: 4, $lt: 6 } }, { sort: { n: 1 } }).toArray()), ['i04', 'i05'], 'dropped: a scan finds them')
})

t.test('an index over many cold documents is built a batch at a time; writes meanwhile keep its entries exact', async (t) => {
  const dataDir = tempDataDir(t)
  let store = EmbeddedStore.open({ dataDir, coldTier })
  t.teardown(() => store.close())
  let c = store.collection('instances')
  const count = 2 * BUILD_BATCH + 100
  const model = new Map(Array.from({ length: count }, (_, i) => [`d${i}`, { status: 'completed', group: i % 4, n: i }]))
  await c.insertMany([...model].map(([_id, doc]) => ({ _id, ...doc })))
  t.equal(store.hotDocuments('instances'), 0)

  const built = c.createIndex({ group: 1, n: 1 })
  // While it builds: one document whose entry is saved already changes, others ahead of the build change, go, come back or arrive.
  const writes = [
    c.updateOne({ _id: 'd1' }, { $set: { group: 9 } }),
    c.updateOne({ _id: 'd5' }, { $set: { group: 9 } }),
    c.deleteOne({ _id: 'd6' }),
    c.updateOne({ _id: 'd7' }, { $set: { status: 'running' } }),
    c.insertOne({ _id: 'new', status: 'completed', group: 9, n: -1 }),
  ]
  t.same(ids(await c.find({ group: 9 }, { sort: { n: 1 } }).toArray()), ['new', 'd1', 'd5'], 'reads meanwhile are exact')
  const third = [...model].filter(([, doc]) => doc.group === 3).length
  t.equal((await c.find({ group: 3 }).toArray()).length, third, 'and do not plan on the entries not saved yet')
  await Promise.all([built, ...writes])
  for (const id of ['d1', 'd5']) model.set(id, { ...(model.get(id) as { status: string; group: number; n: number }), group: 9 })
  model.delete('d6')
  model.set('new', { status: 'completed', group: 9, n: -1 })
  const expected = (group: number): string[] =>
    [...model]
      .filter(([, doc]) => doc.group === group)
      .sort(([, a], [, b]) => a.n - b.n)
      .map(([id]) => id)

  const check = async (when: string): Promise<void> => {
    // Projected on the index's fields, the reads are answered from the cold entries alone: a stale entry would show.
    for (const group of [1, 9]) {
      const found = await c.find({ group }, { sort: { n: 1 }, projection: { group: 1, n: 1 } }).toArray()
      t.same(ids(found), expected(group), `${when}: group ${group} from the entries`)
      t.ok(
        found.every((doc) => doc.group === group),
        `${when}: every entry holds its document's value`,
      )
    }
  }
  await check('built')
  await store.close()
  // A build that stopped before its definition was saved: the entries stay, a new build saves them again.
  const file = new Database(join(dataDir, DATABASE_FILE))
  file.prepare("DELETE FROM indexes WHERE collection = 'instances' AND name = 'group_1_n_1'").run()
  file.close()
  store = EmbeddedStore.open({ dataDir, coldTier })
  c = store.collection('instances')
  await c.createIndex({ group: 1, n: 1 })
  await check('built again after an interrupted build')
})

t.test('TTL indexes expire cold documents', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')
  await c.createIndex({ when: 1 }, { expireAfterSeconds: 0 })
  t.equal(await store.sweepExpired(new Date(Date.UTC(2025, 0, 5, 12))), 5, 'i00..i04, hot and cold')
  t.same(ids(await c.find({}, { sort: { _id: 1 } }).toArray()), ['i05', 'i06', 'i07', 'i08', 'i09'])
})

t.test('a write SQLite refuses leaves a cold document cold and unchanged', async (t) => {
  const dataDir = tempDataDir(t)
  const store = await seeded(t, dataDir)
  const c = store.collection('instances')
  const saboteur = new Database(join(dataDir, DATABASE_FILE))
  saboteur.exec(
    `CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.doc LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
  )
  saboteur.close()
  const original = await c.findOne({ _id: 'i01' })
  await t.rejects(
    store.applyAtomically([
      { collection: 'instances', kind: 'updateOne', filter: { _id: 'i01' }, update: { $set: { status: 'running', code: 'X' } } },
      { collection: 'instances', kind: 'deleteMany', filter: { _id: 'i02' } },
      { collection: 'instances', kind: 'insertOne', doc: { _id: 'p', code: 'poison', status: 'completed' } },
    ]),
    { name: 'JournalWriteError' },
  )
  t.same(await c.findOne({ _id: 'i01' }), original, 'the cold document is as it was')
  t.equal(store.hotDocuments('instances'), 4, 'and not in memory')
  t.equal(await c.countDocuments({ code: 'X' }), 0)
  t.equal(await c.countDocuments({ _id: { $in: ['i02', 'p'] } }), 1, 'the delete is undone, the insert gone')
})

/** Opens a copy of the fixture twice: every document is found, the ended ones cold, and the file holds the layout of now. */
async function opensFixture(t: Tap, fixture: string): Promise<void> {
  const dataDir = tempDataDir(t)
  cpSync(fixture, dataDir, { recursive: true })
  const first = EmbeddedStore.open({ dataDir })
  const contexts = first.collection('contexts')
  t.equal(first.hotDocuments('contexts'), 10, 'the running instances are in memory, the 20 ended ones are not')
  t.equal(first.hotDocuments('activities'), 0)
  t.equal(first.hotDocuments('notifications'), 10)
  t.equal(await contexts.countDocuments(), 30)
  t.same(
    ids(
      await contexts
        .find({ processId: 'leave', appId: 'app', lastUpdate: { $gte: new Date(Date.UTC(2025, 0, 27)) } }, { sort: { lastUpdate: -1 } })
        .toArray(),
    ),
    ['pi-29', 'pi-28', 'pi-27', 'pi-26'],
  )
  t.same(ids(await contexts.find({ processStatus: 'cancelled', lastUpdate: { $lt: new Date(Date.UTC(2025, 0, 6)) } }).toArray()), [
    'pi-01',
    'pi-04',
  ])
  t.equal(await contexts.countDocuments({ 'processInstance.tags': 't1' }), 15)
  await t.rejects(
    contexts.insertOne({ _id: 'x', ticket: 'T-4', processStatus: 'running' }),
    { code: 11000 },
    'its unique index covers the cold ones',
  )
  const activities = first.collection('activities')
  t.same(ids(await activities.find({ processInstanceId: 'pi-04' }, { sort: { timeStamp: -1 } }).toArray()), ['act-4-1', 'act-4-0'])
  t.same(await first.collection('users').findOne({ userId: 'ada' }), { _id: 'u1', userId: 'ada' })
  await first.close()

  const db = new Database(join(dataDir, DATABASE_FILE), { readonly: true })
  const layout = db
    .prepare('SELECT collection, cold, count(*) AS n FROM documents GROUP BY collection, cold ORDER BY collection, cold')
    .all()
  const documentsTable = db.prepare<[], string>("SELECT sql FROM sqlite_master WHERE name = 'documents'").pluck().get()
  const layoutVersion = db.pragma('user_version', { simple: true })
  db.close()
  t.notMatch(documentsTable, /WITHOUT ROWID/, 'documents is a rowid table')
  t.equal(layoutVersion, 3)
  t.same(layout, [
    { collection: 'activities', cold: 1, n: 60 },
    { collection: 'contexts', cold: 0, n: 10 },
    { collection: 'contexts', cold: 1, n: 20 },
    { collection: 'notifications', cold: 0, n: 10 },
    { collection: 'notifications', cold: 1, n: 20 },
    { collection: 'users', cold: 0, n: 1 },
  ])
  const second = EmbeddedStore.open({ dataDir })
  t.teardown(() => second.close())
  t.equal(second.hotDocuments('contexts'), 10, 'a second open finds it moved')
  t.equal(await second.collection('contexts').countDocuments({ processStatus: 'completed' }), 10)
  t.same(
    ids(
      await second
        .collection('contexts')
        .find({ processStatus: 'cancelled', lastUpdate: { $lt: new Date(Date.UTC(2025, 0, 6)) } })
        .toArray(),
    ),
    ['pi-01', 'pi-04'],
  )
}

t.test('a data dir written before the cold tier opens, moved to it once', (t) => opensFixture(t, LAYOUT_1))

t.test('a data dir written before documents was a rowid table opens, its cold documents and their keys kept', (t) =>
  opensFixture(t, LAYOUT_2),
)

t.test('a sorted page of cold documents reads a page of the index, in MongoDB order across kinds of values', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t), coldTier })
  t.teardown(() => store.close())
  const c = store.collection('instances')
  await c.createIndex({ status: 1, when: 1 })
  const whenOf = (i: number): unknown =>
    i % 50 === 1 ? i : i % 50 === 2 ? `s${i}` : i % 50 === 3 ? null : i % 50 === 4 ? undefined : new Date(Date.UTC(2025, 0, 1, 0, i % 97))
  await c.insertMany(
    Array.from({ length: 600 }, (_, i) => ({
      _id: `k${String(i).padStart(3, '0')}`,
      status: i % 7 === 0 ? 'running' : 'completed',
      when: whenOf(i),
    })),
  )
  for (const [sort, skip, limit] of [
    [{ when: -1, _id: -1 }, 0, 5],
    [{ when: 1, _id: 1 }, 0, 5],
    [{ when: 1 }, 10, 20],
    [{ when: -1, _id: 1 }, 3, 40],
  ] as const) {
    const everything = await c.find({ status: { $in: ['completed', 'running'] } }, { sort }).toArray()
    const reads = store.coldTierReads
    const page = await c.find({ status: 'completed' }, { sort, skip, limit }).toArray()
    const expected = everything.filter((doc) => doc.status === 'completed').slice(skip, skip + limit)
    t.same(ids(page), ids(expected), `${JSON.stringify(sort)} skip ${skip} limit ${limit}`)
    t.ok(store.coldTierReads - reads <= 4, 'one page per kind of value')
  }
  const newest = await c.findOne({ status: 'completed' }, { sort: { when: -1 } })
  t.same(newest?.when, new Date(Date.UTC(2025, 0, 1, 0, 96)), 'findOne with a sort')
})

t.test('many cold documents under one key are read page by page, each once', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t), coldTier })
  t.teardown(() => store.close())
  const c = store.collection('instances')
  await c.createIndex({ status: 1 })
  await c.insertMany(Array.from({ length: 1000 }, (_, i) => ({ _id: `t${String(i).padStart(4, '0')}`, status: 'completed' })))
  const reads = store.coldTierReads
  const found = await c.find({ status: 'completed' }).toArray()
  t.equal(new Set(ids(found)).size, 1000)
  t.ok(store.coldTierReads - reads <= 5, 'about one read per 256 documents')
  t.same(ids(await c.find({ status: 'completed' }, { sort: { _id: -1 }, limit: 2 }).toArray()), ['t0999', 't0998'])
})

t.test('a sorted page under several pinned values reads a page of each', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t), coldTier })
  t.teardown(() => store.close())
  const c = store.collection('instances')
  await c.createIndex({ status: 1, when: 1 })
  await c.insertMany(
    Array.from({ length: 1500 }, (_, i) => ({ _id: `e${i}`, status: ENDED[i % 2], when: new Date(Date.UTC(2025, 0, 1, 0, 0, i)) })),
  )
  const reads = store.coldTierReads
  const oldest = await c
    .find({ status: { $in: ENDED }, when: { $lt: new Date(Date.UTC(2026, 0, 1)) } }, { sort: { when: 1 }, limit: 3 })
    .toArray()
  t.same(ids(oldest), ['e0', 'e1', 'e2'])
  t.ok(store.coldTierReads - reads <= 2, 'one page per status')
})

t.test('an append-only collection whose writers give fresh ids is appended to without reading SQLite; others check theirs', async (t) => {
  const dataDir = tempDataDir(t)
  const rules: ColdTier = (collection) =>
    collection === 'log' ? { always: true, freshIds: true } : collection === 'checked' ? { always: true } : undefined
  const store = EmbeddedStore.open({ dataDir, coldTier: rules })
  t.teardown(() => store.close())
  const log = store.collection('log')
  const checked = store.collection('checked')
  await log.createIndex({ owner: 1 })
  await log.insertMany([{ _id: 'r1', owner: 'a' }])
  await checked.insertOne({ _id: 'r1', owner: 'a' })
  const before = store.coldTierReads
  await log.insertOne({ _id: 'r2', owner: 'a' })
  t.equal(store.coldTierReads, before, 'no SQLite read for the append')
  t.same(ids(await log.find({ owner: 'a' }, { sort: { _id: 1 } }).toArray()), ['r1', 'r2'], 'both records found, cold')
  await t.rejects(checked.insertOne({ _id: 'r1', owner: 'b' }), { code: 11000 }, 'without the promise a cold id is still refused')
  t.ok(store.coldTierReads > before)
})

t.test('inserts of new ids read no SQLite; an id a cold document holds is refused, also after a reopen', async (t) => {
  const dataDir = tempDataDir(t)
  // No unique index: each of those checks its keys among the cold documents too (assertUniqueAmongCold).
  const open = async (): Promise<EmbeddedStore> => {
    const store = EmbeddedStore.open({ dataDir, coldTier })
    await store.collection('instances').createIndex({ status: 1, when: 1 })
    return store
  }
  const first = await open()
  const c = first.collection('instances')
  await c.insertMany(Array.from({ length: 10 }, (_, i) => instance(i, i % 3 === 0 ? 'running' : 'completed')))
  const before = first.coldTierReads
  await c.insertMany([instance(20, 'running'), instance(21, 'running')])
  await c.deleteMany({ _id: 'i22' })
  t.equal(first.coldTierReads, before, 'the filter of cold ids rules the new ids out: no SQLite read')
  await t.rejects(c.insertOne(instance(1, 'running')), { code: 11000 }, 'a cold id, refused')
  await c.updateOne({ _id: 'i21' }, { $set: { status: 'completed' } })
  await t.rejects(c.insertOne(instance(21, 'running')), { code: 11000 }, 'one made cold since, refused')
  await first.close()
  const reopened = await open()
  t.teardown(() => reopened.close())
  await reopened.coldFiltersFilled()
  const reads = reopened.coldTierReads
  await reopened.collection('instances').insertOne(instance(30, 'running'))
  t.equal(reopened.coldTierReads, reads, 'the filter is rebuilt from the file after the open')
  for (const id of [2, 21]) {
    await t.rejects(reopened.collection('instances').insertOne(instance(id, 'running')), { code: 11000 }, `i${id} refused`)
  }
  t.equal((await reopened.collection('instances').findOne({ _id: 'i21' }))?.status, 'completed', 'a cold document is still read by id')
})

t.test('an index created while a document is on its way to the cold tier loses its entry when it leaves memory', async (t) => {
  const store = await seeded(t)
  const c = store.collection('instances')
  const hotBefore = store.hotDocuments('instances')
  const writing = c.insertOne(instance(50, 'completed'))
  const indexing = c.createIndex({ n: 1 }, { unique: true })
  await Promise.all([writing, indexing])
  t.equal(store.hotDocuments('instances'), hotBefore, 'the ended instance left memory')
  t.same(ids(await c.find({ n: 50 }).toArray()), ['i50'], 'the new index finds it in SQLite')
  await c.deleteOne({ _id: 'i50' })
  await c.insertOne(instance(51, 'running', { n: 50 }))
  t.same(ids(await c.find({ n: 50 }).toArray()), ['i51'], 'no entry of the evicted document was left behind in memory to refuse the key')
})
