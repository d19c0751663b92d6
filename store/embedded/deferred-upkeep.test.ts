/**
 * Deferred index upkeep: however writes, deletes and documents leaving memory interleave with
 * catch-ups, a caught-up index holds exactly the entries of an index kept up to date at every write
 * (multikey entries and array fields included), and the embedded store's queries on a non-unique
 * index see every write before them while its unique indexes still refuse a duplicate at once, and
 * a write SQLite refuses leaves no trace in an index that caught up with it meanwhile. A read that
 * `_id` or a whole unique key pins is planned on the unique indexes alone, and leaves the deferred
 * ones behind without their answers ever going stale.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import Database from 'better-sqlite3'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { Collection, Document } from '../port.js'
import { DeferredUpkeep } from './deferred-upkeep.js'
import { pinnedByUnique } from './query-plan.js'
import { DATABASE_FILE, EmbeddedStore } from './store.js'
import { type IndexEntry, SecondaryIndex } from './secondary-index.js'

const SPEC = { name: 'status_tags_at', keys: { status: 1, tags: 1, at: -1 } as const, unique: false }
const EVERYTHING = { prefixes: [''], fields: 0 }

/** A document with random values in the indexed fields, an array of tags now and then. */
function randomDocument(id: string, random: () => number): Document {
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
  const tags = random() < 0.4 ? [pick(['a', 'b', 'c']), pick(['a', 'd'])] : pick(['a', 'b', undefined])
  return { _id: id, status: pick(['running', 'completed', 'failed']), tags, at: new Date(Date.UTC(2026, 0, 1 + Math.floor(random() * 9))) }
}

function holds(index: SecondaryIndex): { ids: string[]; rangeBounds: unknown } {
  const ranges = new Map([['tags', { tag: 'string', lower: { value: 'a', inclusive: true }, upper: { value: 'b', inclusive: true } }]])
  return {
    ids: index.idsWithin(EVERYTHING).sort(),
    // A range on a field that holds arrays is not intersected: the bounds tell whether the index counts them.
    rangeBounds: index.boundsFor(new Map([['status', ['running']]]), ranges),
  }
}

t.test('a caught-up index holds what an index kept up to date at every write holds, partial catch-ups between', async (t) => {
  let seed = 11
  const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647
  const eager = new SecondaryIndex('c', SPEC)
  const deferred = new SecondaryIndex('c', SPEC)
  const upkeep = new DeferredUpkeep()
  const docs = new Map<string, Document>()
  const entries = new WeakMap<Document, IndexEntry>()
  const entryOf = (_index: SecondaryIndex, doc: Document): IndexEntry => {
    if (!entries.has(doc)) entries.set(doc, deferred.entryOf(doc))
    return entries.get(doc) as IndexEntry
  }
  let catchUps = 0
  for (let step = 0; step < 4000; step++) {
    const id = `d${Math.floor(random() * 150)}`
    const before = docs.get(id)
    const roll = random()
    if (roll < 0.1 && before) {
      // The document leaves memory (goes cold): the deferred index drops whatever it holds for it.
      const filed = upkeep.leaving(id)
      const held = filed === undefined ? before : filed
      if (held) deferred.delete(id, entryOf(deferred, held))
      eager.delete(id, eager.entryOf(before))
      docs.delete(id)
    } else if (roll < 0.2 && before) {
      upkeep.changed(id, before)
      eager.delete(id, eager.entryOf(before))
      docs.delete(id)
    } else {
      const after = randomDocument(id, random)
      upkeep.changed(id, before ?? null)
      if (before) eager.delete(id, eager.entryOf(before))
      eager.insert(id, eager.entryOf(after))
      docs.set(id, after)
    }
    // A write past the bound brings the longest-waiting few up to date; a read, all of them.
    if (random() < 0.05) upkeep.catchUp([deferred], docs, entryOf, 1 + Math.floor(random() * 5))
    if (random() < 0.02) {
      upkeep.catchUp([deferred], docs, entryOf)
      catchUps++
      t.equal(upkeep.size, 0)
      if (JSON.stringify(holds(deferred)) !== JSON.stringify(holds(eager))) {
        t.fail(`the deferred index differs after step ${step}`)
        return
      }
    }
  }
  upkeep.catchUp([deferred], docs, entryOf)
  t.same(holds(deferred), holds(eager), `alike after ${catchUps + 1} catch-ups`)
  t.ok(holds(eager).ids.length > 100, 'the index holds entries to compare')
})

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** An embedded store in a temporary data dir, closed and removed after the test, and its `items` collection. */
function openItems(t: Tap): { dataDir: string; items: Collection } {
  const dataDir = mkdtempSync(join(tmpdir(), 'deferred-upkeep-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  return { dataDir, items: store.collection('items') }
}

t.test("the store's queries on a non-unique index see every write; a unique index refuses a duplicate at the write", async (t) => {
  const { items } = openItems(t)
  await items.createIndex({ status: 1, at: 1 })
  await items.createIndex({ key: 1 }, { unique: true })
  for (let i = 0; i < 50; i++) await items.insertOne({ _id: `i${i}`, key: `k${i}`, status: 'open', at: i })
  for (let i = 0; i < 50; i += 2) await items.updateOne({ _id: `i${i}` }, { $set: { status: 'closed' } })
  await items.updateOne({ _id: 'i3' }, { $set: { status: 'closed', at: 100 } })
  await items.deleteOne({ _id: 'i5' })
  const closed = await items.find({ status: 'closed', at: { $gte: 10 } }).toArray()
  t.same(
    closed.map((doc) => doc._id).sort(),
    ['i3', ...Array.from({ length: 20 }, (_, n) => `i${10 + 2 * n}`)].sort(),
    'the closed ones from 10 on, i3 moved to 100',
  )
  t.same((await items.find({ status: 'open' }).toArray()).length, 23, 'the open ones, i3 and i5 gone')
  await t.rejects(items.insertOne({ _id: 'dup', key: 'k7', status: 'open', at: 7 }), { code: 11000 })
  await t.rejects(items.updateOne({ _id: 'i9' }, { $set: { key: 'k11' } }), { code: 11000 })
  t.same(await items.findOne({ key: 'k9' }), { _id: 'i9', key: 'k9', status: 'open', at: 9 }, 'the refused update changed nothing')
  t.same((await items.find({ status: 'open', at: { $lt: 10 } }).toArray()).length, 3, 'i1, i7, i9: no refused write reached the index')
})

t.test('a write SQLite refuses is undone in an index that a read brought up to date with it meanwhile', async (t) => {
  const { dataDir, items } = openItems(t)
  await items.createIndex({ status: 1 })
  await items.insertMany([
    { _id: 'a', status: 'open' },
    { _id: 'b', status: 'open' },
  ])
  const saboteur = new Database(join(dataDir, DATABASE_FILE))
  for (const event of ['INSERT', 'UPDATE'])
    saboteur.exec(
      `CREATE TRIGGER poison_${event} BEFORE ${event} ON documents WHEN NEW.doc LIKE '%poison%' ` +
        `BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
    )
  saboteur.close()
  // The write changes memory at once and reaches SQLite after this task; the read in between plans on the index.
  const refused = items.updateOne({ _id: 'a' }, { $set: { status: 'moved', note: 'poison' } })
  const readMeanwhile = items.find({ status: 'moved' }).toArray()
  await t.rejects(refused, { name: 'JournalWriteError' })
  t.same(
    (await readMeanwhile).map((doc) => doc._id),
    ['a'],
    'the read saw the write, as a read after an unanswered write may',
  )
  t.same(await items.find({ status: 'moved' }).toArray(), [], 'the refused write left the index')
  t.same((await items.find({ status: 'open' }).toArray()).map((doc) => doc._id).sort(), ['a', 'b'], 'a is open again')
})

t.test('a read pinned by _id or a whole unique index is planned on the unique indexes alone', async (t) => {
  const byKey = new SecondaryIndex('c', { name: 'key', keys: { key: 1 }, unique: true })
  const byPair = new SecondaryIndex('c', { name: 'pair', keys: { a: 1, b: 1 }, unique: true })
  const partial = { key: { $exists: true } }
  const byOptionalKey = new SecondaryIndex('c', { name: 'optional', keys: { key: 1 }, unique: true, partialFilterExpression: partial })
  t.ok(pinnedByUnique({ _id: { $in: ['x', 'y'] }, status: 'open' }, []), 'ids named')
  t.ok(pinnedByUnique({ key: { $in: ['k1', 'k2'] }, status: { $in: ['open'] } }, [byKey]), 'a whole unique key')
  t.ok(pinnedByUnique({ $and: [{ a: 1 }, { b: 2 }] }, [byPair]), 'a whole compound unique key, within $and')
  t.notOk(pinnedByUnique({ a: 1 }, [byPair]), 'a prefix of a compound unique key may match many')
  t.notOk(pinnedByUnique({ key: { $gt: 'k' } }, [byKey]), 'a range is no pin')
  t.ok(pinnedByUnique({ key: { $in: ['k1'] } }, [byOptionalKey]), 'a partial unique index that holds every value pinned')
  t.notOk(pinnedByUnique({ key: null }, [byOptionalKey]), 'a partial unique index leaves out the documents without the key')
  t.notOk(pinnedByUnique({ status: 'open' }, [byKey]), 'no unique field pinned')
})

t.test('a read pinned by a unique key finds what the deferred indexes are behind on, and they catch up for the next read', async (t) => {
  const { items } = openItems(t)
  await items.createIndex({ status: 1 })
  await items.createIndex({ key: 1 }, { unique: true })
  await items.insertOne({ _id: 'a', key: 'ka', status: 'waiting' })
  t.same(await items.countDocuments({ status: 'waiting' }), 1, 'a read on the status index files a as waiting')
  await items.updateOne({ _id: 'a' }, { $set: { status: 'done' } })
  // The status index still holds a as waiting and no document as done: planned on it, this read would find nothing.
  t.same(await items.findOne({ key: 'ka', status: 'done' }), { _id: 'a', key: 'ka', status: 'done' }, 'found by its key')
  t.same(await items.countDocuments({ status: 'done' }), 1, 'the status index caught up')
  t.same(await items.countDocuments({ status: 'waiting' }), 0, 'and holds a no more as waiting')
})

t.test('reads pinned by a unique key and reads on the deferred indexes, interleaved with writes, answer what a scan does', async (t) => {
  const { items } = openItems(t)
  await items.createIndex({ status: 1, at: 1 })
  await items.createIndex({ key: 1 }, { unique: true, partialFilterExpression: { key: { $exists: true } } })
  let seed = 7
  const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647
  const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)] as T
  const model = new Map<string, Document>()
  const expected = (test: (doc: Document) => boolean): string[] =>
    [...model.values()]
      .filter(test)
      .map((doc) => String(doc._id))
      .sort()
  const ids = async (filter: Document): Promise<string[]> => (await items.find(filter).toArray()).map((doc) => String(doc._id)).sort()
  const STATUSES = ['waiting', 'running', 'done'] as const
  for (let step = 0; step < 600; step++) {
    const n = Math.floor(random() * 40)
    const id = `j${n}`
    const key = `k${n}`
    const roll = random()
    if (roll < 0.35 && !model.has(id)) {
      const doc = { _id: id, key, status: pick(STATUSES), at: Math.floor(random() * 10) }
      await items.insertOne({ ...doc })
      model.set(id, doc)
    } else if (roll < 0.55) {
      const status = pick(STATUSES)
      await items.updateMany({ key: { $in: [key] } }, { $set: { status } })
      const doc = model.get(id)
      if (doc) model.set(id, { ...doc, status })
    } else if (roll < 0.75) {
      const statuses = [pick(STATUSES), pick(STATUSES)]
      const doc = model.get(id)
      const removed = await items.deleteMany({ key: { $in: [key, `k${n + 1}`] }, status: { $in: statuses } })
      const gone = [id, `j${n + 1}`].filter((candidate) => statuses.includes(model.get(candidate)?.status as (typeof STATUSES)[number]))
      t.equal(removed.deletedCount, gone.length, `step ${step}: the removal by key`)
      for (const candidate of gone) model.delete(candidate)
      if (doc && !gone.includes(id)) t.ok(await items.findOne({ key }), `step ${step}: what the removal left is still found by key`)
    } else if (roll < 0.9) {
      const status = pick(STATUSES)
      const from = Math.floor(random() * 10)
      const found = await ids({ status, at: { $gte: from } })
      if (JSON.stringify(found) !== JSON.stringify(expected((doc) => doc.status === status && (doc.at as number) >= from)))
        t.fail(`step ${step}: the deferred index answered ${JSON.stringify(found)}`)
    } else {
      const keys = [key, `k${(n + 7) % 40}`]
      t.same(
        await ids({ key: { $in: keys } }),
        expected((doc) => keys.includes(String(doc.key))),
        `step ${step}: the read by key`,
      )
    }
  }
  for (const status of STATUSES)
    t.same(
      await ids({ status }),
      expected((doc) => doc.status === status),
      `at the end: ${status}`,
    )
})
