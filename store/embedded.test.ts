/**
 * What only the embedded store has to prove: durability across close, reopen and kill -9, the
 * data-dir lock, TTL expiry, file handles that cannot escape the files directory, all-or-nothing
 * multi-document writes, and writes that SQLite refuses being undone in memory.
 */
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import t from 'tap'
import { LOCK_FILE, OWNER_FILE } from './embedded/data-dir-lock.js'
import { DATABASE_FILE, EmbeddedStore } from './embedded/store.js'
import { documentsById } from './test-support.js'

const writerChild = fileURLToPath(new URL('./fixtures/writer-child.js', import.meta.url))

function tempDataDir(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'store-embedded-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  return dir
}

/** A pid that certainly belongs to no running process: one that has just exited. */
function deadPid(): number {
  const { pid } = spawnSync(process.execPath, ['-e', ''])
  if (!pid) throw new Error('could not spawn node')
  return pid
}

t.test('documents, Dates and indexes survive close and reopen', async (t) => {
  const dataDir = tempDataDir(t)
  const when = new Date('2024-02-29T23:59:59.999Z')
  const first = EmbeddedStore.open({ dataDir })
  const c = first.collection('things')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.insertOne({ _id: 'a', code: 'A', when, nested: { list: [when, { at: when }] }, gone: undefined, n: 1.5, none: null })
  await c.updateOne({ _id: 'a' }, { $set: { later: new Date(when.getTime() + 1) }, $inc: { n: 1 } })
  await c.insertOne({ _id: 'b', code: 'B' })
  await c.deleteOne({ _id: 'b' })
  const expected = {
    _id: 'a',
    code: 'A',
    when,
    nested: { list: [when, { at: when }] },
    n: 2.5,
    none: null,
    later: new Date(when.getTime() + 1),
  }
  t.same(await c.findOne({ _id: 'a' }), expected, 'undefined fields are dropped at once, as on disk')
  await first.close()
  t.equal(
    spawnSync(process.execPath, [writerChild, dataDir, '0']).status,
    0,
    'close releases the lock: another process opens the directory',
  )

  const second = EmbeddedStore.open({ dataDir })
  t.teardown(() => second.close())
  const reopened = second.collection('things')
  const doc = await reopened.findOne({ code: 'A' })
  t.same(doc, expected)
  t.ok(doc?.when instanceof Date && (doc.nested as { list: unknown[] }).list[0] instanceof Date, 'Dates come back as Dates')
  t.equal(await reopened.countDocuments(), 1, 'the deleted document stays deleted')
  await t.rejects(reopened.insertOne({ code: 'A' }), { code: 11000 }, 'the unique index came back')
  t.same(await second.listCollections(), ['things'])
})

t.test('an acknowledged write survives kill -9 of its process', async (t) => {
  const dataDir = tempDataDir(t)
  const child = spawn(process.execPath, [writerChild, dataDir, '1000000'], { stdio: ['ignore', 'pipe', 'pipe'] })
  const acknowledged: string[] = []
  let pending = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    const lines = (pending + chunk).split('\n')
    pending = lines.pop() ?? ''
    acknowledged.push(...lines)
    if (acknowledged.length >= 500) child.kill('SIGKILL')
  })
  const signal = await new Promise<NodeJS.Signals | null>((resolve) => child.on('close', (_code, sig) => resolve(sig)))
  t.equal(signal, 'SIGKILL', `the writer was killed mid-way ${stderr}`)
  t.ok(acknowledged.length >= 500)
  t.equal(
    readFileSync(join(dataDir, OWNER_FILE), 'utf8').trim(),
    String(child.pid),
    'the dead writer is still named as the owner; its OS lock went with it',
  )

  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  const acks = store.collection('acks')
  const found = await acks.find({ _id: { $in: acknowledged } }, { projection: { _id: 1 } }).toArray()
  t.equal(found.length, acknowledged.length, `all ${acknowledged.length} acknowledged inserts are there`)
  t.ok((await acks.countDocuments()) >= acknowledged.length)
  const last = await acks.findOne({ _id: acknowledged[acknowledged.length - 1] })
  t.ok(last?.at instanceof Date, 'intact documents')
})

t.test('a second process on the same data dir fails at open with a clear message', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  const result = spawnSync(process.execPath, [writerChild, dataDir, '1'], { encoding: 'utf8' })
  t.equal(result.status, 1)
  t.match(
    result.stderr,
    `Data directory ${dataDir} is in use by process ${process.pid} (store.lock); stop that process or choose another DATA_DIR`,
  )
  t.equal(await store.collection('acks').countDocuments(), 0, 'the second process wrote nothing')
})

t.test('opening the same data dir twice in one process fails clearly', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  t.throws(() => EmbeddedStore.open({ dataDir }), { message: new RegExp(`Data directory ${dataDir} is already open in this process`) })
  await store.close()
  const again = EmbeddedStore.open({ dataDir })
  await again.close()
  t.pass('after close it opens again')
})

t.test('a process killed with -9 frees the directory at once: an open right after the kill, before it is reaped, succeeds', async (t) => {
  const dataDir = tempDataDir(t)
  for (let round = 0; round < 5; round++) {
    const child = spawn(process.execPath, [writerChild, dataDir, '1000000', `round-${round}-`], { stdio: ['ignore', 'pipe', 'ignore'] })
    const closed = new Promise((resolve) => child.on('close', resolve))
    await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()))
    child.kill('SIGKILL')
    // No wait for 'exit': a supervisor restarts at once, while the dead process may still be a zombie.
    const store = EmbeddedStore.open({ dataDir })
    await store.close()
    await closed
  }
  t.pass('5 opens right after kill -9 succeeded')
})

t.test('a pid file left by an earlier version is taken over when its process is gone, and stops the start while it lives', async (t) => {
  const dataDir = tempDataDir(t)
  for (const [name, stalePid] of [
    ['a dead process', String(deadPid())],
    ['our own pid from an earlier life', String(process.pid)],
    ['garbage', 'x'],
  ]) {
    writeFileSync(join(dataDir, LOCK_FILE), `${stalePid}\n`)
    const store = EmbeddedStore.open({ dataDir })
    t.equal(readFileSync(join(dataDir, OWNER_FILE), 'utf8').trim(), String(process.pid), `lock of ${name} taken over`)
    await store.close()
  }
  const live = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' })
  t.teardown(() => void live.kill('SIGKILL'))
  writeFileSync(join(dataDir, LOCK_FILE), `${live.pid}\n`)
  t.throws(() => EmbeddedStore.open({ dataDir }), {
    message: `Data directory ${dataDir} is in use by process ${live.pid} (store.lock); stop that process or choose another DATA_DIR`,
  })
})

t.test('TTL indexes remove expired documents', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  const c = store.collection('sessions')
  await c.createIndex({ expiresAt: 1 }, { expireAfterSeconds: 0 })
  await c.createIndex({ createdAt: 1 }, { expireAfterSeconds: 3600, partialFilterExpression: { temporary: true } })
  const now = new Date('2030-01-01T12:00:00Z')
  const minutes = (n: number): Date => new Date(now.getTime() + n * 60_000)
  await c.insertMany([
    { _id: 'expired', expiresAt: minutes(-1) },
    { _id: 'exactly-now', expiresAt: now },
    { _id: 'future', expiresAt: minutes(1) },
    { _id: 'earliest-of-array', expiresAt: [minutes(5), minutes(-5)] },
    { _id: 'not-a-date', expiresAt: '2000-01-01' },
    { _id: 'no-field' },
    { _id: 'old-temporary', createdAt: minutes(-61), temporary: true },
    { _id: 'old-permanent', createdAt: minutes(-61) },
    { _id: 'young-temporary', createdAt: minutes(-59), temporary: true },
  ])
  t.equal(await store.sweepExpired(now), 4)
  const left = (await c.find({}, { sort: { _id: 1 } }).toArray()).map((doc) => doc._id)
  t.same(left, ['future', 'no-field', 'not-a-date', 'old-permanent', 'young-temporary'])
  t.equal(await store.sweepExpired(now), 0, 'nothing more to do')
  await store.close()

  const reopened = EmbeddedStore.open({ dataDir })
  t.teardown(() => reopened.close())
  t.equal(await reopened.collection('sessions').countDocuments(), 5, 'the removals are durable')
  t.equal(await reopened.sweepExpired(minutes(1)), 2, 'both TTL indexes came back with the reopen')
})

t.test('file handles cannot reach outside the files directory', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  for (const handle of [
    '../store.sqlite',
    '../store.lock',
    '../../etc/passwd',
    '/etc/passwd',
    '..',
    '.',
    'files/../../x',
    '%2e%2e%2fstore.lock',
  ]) {
    t.equal(await store.files.get(handle), null, `get ${handle}`)
    t.equal(await store.files.delete(handle), false, `delete ${handle}`)
  }
  t.ok(existsSync(join(dataDir, LOCK_FILE)) && existsSync(join(dataDir, 'store.sqlite')), 'nothing outside was touched')
})

t.test('multi-document writes are all or nothing', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  const c = store.collection('batch')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.insertOne({ _id: 'x', code: 'X' })
  await t.rejects(
    c.insertMany([
      { _id: 'a', code: 'A' },
      { _id: 'b', code: 'X' },
    ]),
    { code: 11000 },
  )
  await t.rejects(
    c.insertMany([
      { _id: 'a', code: 'A' },
      { _id: 'a', code: 'B' },
    ]),
    { code: 11000 },
    'duplicate _id inside the batch',
  )
  t.equal(await c.countDocuments(), 1, 'insertMany added nothing')
  await c.insertMany([
    { _id: 'a', code: 'A', g: 1 },
    { _id: 'b', code: 'B', g: 1 },
  ])
  await t.rejects(c.updateMany({ g: 1 }, { $set: { code: 'Z' } }), { code: 11000 })
  t.same(
    (await c.find({}, { sort: { _id: 1 } }).toArray()).map((doc) => doc.code),
    ['A', 'B', 'X'],
    'updateMany changed nothing',
  )
  const swapped = await c.updateMany({ _id: { $in: ['a', 'x'] } }, { $set: { code: 'tmp' } }).catch((err: unknown) => err)
  t.match(swapped, { code: 11000 }, 'two documents cannot take the same unique value in one updateMany')
  await store.close()

  const reopened = EmbeddedStore.open({ dataDir })
  t.teardown(() => reopened.close())
  t.same(
    (await documentsById(reopened, 'batch')).map((doc) => doc.code),
    ['A', 'B', 'X'],
    'nor did they reach SQLite',
  )
})

t.test('a version token stays until the document is written, and is the old one again when a failed write is undone', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t) })
  t.teardown(() => store.close())
  const counters = store.collection<{ _id: string; value: number }>('counters')
  await counters.createIndex({ value: 1 }, { unique: true })
  t.equal(store.versionToken('counters', 'c'), undefined, 'no document, no token')
  await counters.insertOne({ _id: 'c', value: 1 })
  const first = store.versionToken('counters', 'c')
  t.not(first, undefined)
  await counters.findOne({ _id: 'c' })
  await counters.find({}).toArray()
  t.equal(store.versionToken('counters', 'c'), first, 'reads leave it alone')
  await counters.updateOne({ _id: 'c' }, { $inc: { value: 1 } })
  const second = store.versionToken('counters', 'c')
  t.not(second, first, 'a write gives a new one')
  await counters.insertOne({ _id: 'd', value: 5 })
  await t.rejects(
    store.applyAtomically([
      { collection: 'counters', kind: 'updateOne', filter: { _id: 'c' }, update: { $inc: { value: 1 } } },
      { collection: 'counters', kind: 'updateOne', filter: { _id: 'd' }, update: { $set: { value: 3 } } },
    ]),
    { code: 11000 },
  )
  t.equal(store.versionToken('counters', 'c'), second, 'a batch undone leaves the version it found')
  t.equal(store.versionToken('elsewhere', 'c'), undefined, 'a collection never used has none')
})

t.test('a held document is the one memory holds, left as it was by a write, and none once the document is cold or gone', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t) })
  t.teardown(() => store.close())
  const contexts = store.collection<{ _id: string; processStatus: string; steps: string[] }>('contexts')
  t.equal(store.heldDocument('contexts', 'pi-1'), undefined, 'no document, none held')
  await contexts.insertOne({ _id: 'pi-1', processStatus: 'running', steps: ['start'] })
  const first = store.heldDocument('contexts', 'pi-1')
  t.same(first, { _id: 'pi-1', processStatus: 'running', steps: ['start'] })
  t.equal(store.heldDocument('contexts', 'pi-1'), first, 'the same object each time: no copy')
  await contexts.updateOne({ _id: 'pi-1' }, { $push: { steps: 'approve' } })
  t.same(first, { _id: 'pi-1', processStatus: 'running', steps: ['start'] }, 'a write swapped in a new document')
  t.same(store.heldDocument('contexts', 'pi-1'), { _id: 'pi-1', processStatus: 'running', steps: ['start', 'approve'] })
  await contexts.updateOne({ _id: 'pi-1' }, { $set: { processStatus: 'completed' } })
  t.equal(store.heldDocument('contexts', 'pi-1'), undefined, 'an ended instance is in the cold tier only')
  t.match(await contexts.findOne({ _id: 'pi-1' }), { processStatus: 'completed' }, 'where findOne reads it')
  await store.close()
  t.throws(() => store.heldDocument('contexts', 'pi-1'), 'a closed store holds nothing')
})

t.test('values JSON cannot hold are refused, not mangled', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  const c = store.collection('strict')
  await t.rejects(c.insertOne({ _id: 'm', value: new Map([[1, 2]]) }), { name: 'TypeError', message: /Map/ })
  await t.rejects(c.insertOne({ _id: 'b', value: 10n }), { name: 'TypeError', message: /bigint/ })
  await c.insertOne({ _id: 'ok', n: 1 })
  await t.rejects(c.updateOne({ _id: 'ok' }, { $set: { re: /x/ } }), { name: 'TypeError', message: /RegExp/ })
  t.same(await c.find({}).toArray(), [{ _id: 'ok', n: 1 }])
})

t.test('a closed store refuses work', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  const c = store.collection('x')
  await store.close()
  await store.close()
  await t.rejects(c.insertOne({ a: 1 }), /closed/)
  await t.rejects(c.find({}).toArray(), /closed/)
})

t.test('indexes follow updates, deletes and arrays', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  t.teardown(() => store.close())
  const c = store.collection('planned')
  await c.createIndex({ status: 1 })
  await c.createIndex({ tags: 1 })
  await c.createIndex({ 'owner.id': 1, when: -1 })
  await c.insertMany([
    { _id: 1, status: 'waiting', tags: ['a', 'b'], owner: { id: 'u1' }, when: new Date(1) },
    { _id: 2, status: 'waiting', tags: ['b'], owner: { id: 'u2' }, when: new Date(2) },
  ])
  const idsOf = async (filter: Record<string, unknown>): Promise<unknown[]> =>
    (await c.find(filter, { sort: { _id: 1 } }).toArray()).map((doc) => doc._id)
  await c.updateOne({ _id: 1 }, { $set: { status: 'running', 'owner.id': 'u2' }, $pull: { tags: 'a' } })
  t.same(await idsOf({ status: 'waiting' }), [2])
  t.same(await idsOf({ status: 'running' }), [1])
  t.same(await idsOf({ tags: 'a' }), [])
  t.same(await idsOf({ tags: { $in: ['b', 'zzz'] } }), [1, 2])
  t.same(await idsOf({ 'owner.id': 'u2' }), [1, 2])
  t.same(await idsOf({ 'owner.id': 'u1' }), [])
  await c.replaceOne({ _id: 2 }, { status: 'done', tags: [] })
  t.same(await idsOf({ status: 'waiting' }), [])
  t.same(await idsOf({ tags: 'b' }), [1])
  await c.deleteOne({ _id: 1 })
  t.same(await idsOf({ status: 'running' }), [])
  t.same(await idsOf({ status: { $in: ['done', 'running'] } }), [2])
  t.same(await idsOf({ when: new Date(2) }), [], 'replaced fields are gone from the index')
})

t.test('a write SQLite refuses is undone in memory, with every write queued behind it', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  const c = store.collection('guarded')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.insertOne({ _id: 'a', code: 'A', v: 1 })
  // A trigger stands in for a full disk: SQLite aborts any transaction that saves the poisoned id.
  const saboteur = new Database(join(dataDir, DATABASE_FILE))
  saboteur.exec(
    `CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.id LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
  )
  saboteur.close()

  // The first write goes to SQLite alone at the end of this turn; the next two wait for it and then
  // share one transaction.
  const durable = c.updateOne({ _id: 'a' }, { $set: { v: 2 } })
  await new Promise((turnEnded) => setImmediate(turnEnded))
  const poisoned = c.insertOne({ _id: 'poison', code: 'P' })
  const queuedBehind = c.updateOne({ _id: 'a' }, { $set: { v: 3, code: 'Z' } })
  await t.resolves(durable, 'a write committed before the failure stays')
  await t.rejects(poisoned, { name: 'JournalWriteError', message: /disk on fire/ })
  await t.rejects(queuedBehind, { name: 'JournalWriteError' }, 'a write in the same failed transaction is refused too')

  t.same(await c.find({}).toArray(), [{ _id: 'a', code: 'A', v: 2 }], 'memory holds exactly what SQLite holds')
  t.equal(await c.countDocuments({ code: 'P' }), 0, 'the index forgot the refused insert')
  t.equal(await c.countDocuments({ code: 'Z' }), 0, 'and the refused update')
  await c.insertOne({ _id: 'b', code: 'Z' })
  t.equal(await c.countDocuments({ code: 'Z' }), 1, 'the unique value of an undone write is free again, and writes go on')
  await store.close()

  const reopened = EmbeddedStore.open({ dataDir })
  t.teardown(() => reopened.close())
  t.same(await documentsById(reopened, 'guarded'), [
    { _id: 'a', code: 'A', v: 2 },
    { _id: 'b', code: 'Z' },
  ])
})

t.test('an atomic batch SQLite refuses is undone in memory as a whole', async (t) => {
  const dataDir = tempDataDir(t)
  const store = EmbeddedStore.open({ dataDir })
  const instances = store.collection('instances')
  await instances.insertOne({ _id: 'i', version: 1 })
  const saboteur = new Database(join(dataDir, DATABASE_FILE))
  saboteur.exec(
    `CREATE TRIGGER poison BEFORE INSERT ON documents WHEN NEW.id LIKE '%poison%' BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;`,
  )
  saboteur.close()

  const batch = store.applyAtomically([
    { collection: 'instances', kind: 'updateOne', filter: { _id: 'i', version: 1 }, update: { $inc: { version: 1 } }, mustMatch: true },
    { collection: 'data', kind: 'insertOne', doc: { _id: 'fine' } },
    { collection: 'data', kind: 'insertOne', doc: { _id: 'poison' } },
  ])
  // Applied to memory at once (a concurrent compare-and-set on version 1 now loses)...
  t.equal(await instances.countDocuments({ version: 2 }), 1)
  await t.rejects(batch, { name: 'JournalWriteError', message: /disk on fire/ })
  // ...and undone together when SQLite refuses the one transaction that holds them.
  t.same(await instances.find({}).toArray(), [{ _id: 'i', version: 1 }])
  t.equal(await store.collection('data').countDocuments(), 0)
  await store.close()

  const reopened = EmbeddedStore.open({ dataDir })
  t.teardown(() => reopened.close())
  t.same(await reopened.collection('instances').find({}).toArray(), [{ _id: 'i', version: 1 }])
  t.equal(await reopened.collection('data').countDocuments(), 0, 'no part of the batch reached SQLite')
})

t.test('a find or count examines at most maxExamined documents, and an index narrows what it examines', async (t) => {
  const store = EmbeddedStore.open({ dataDir: tempDataDir(t) })
  t.teardown(() => store.close())
  const c = store.collection('scanned')
  await c.createIndex({ code: 1 }, { unique: true })
  await c.insertMany(Array.from({ length: 10 }, (_, n) => ({ code: `C${n}`, n })))
  await t.rejects(
    c.find({ n: { $gte: 0 } }, { maxExamined: 5 }).toArray(),
    { name: 'ScanBudgetExceededError' },
    'a scan of ten stops at five',
  )
  await t.rejects(c.countDocuments({ n: 3 }, { maxExamined: 9 }), { name: 'ScanBudgetExceededError' })
  t.equal((await c.find({ n: { $gte: 0 } }, { maxExamined: 10 }).toArray()).length, 10, 'within the budget, every match')
  t.equal(await c.countDocuments({ code: { $in: ['C1', 'C2'] } }, { maxExamined: 2 }), 2, 'the index hands over only two candidates')
  t.equal((await c.find({ n: { $gte: 0 } }, { limit: 3, maxExamined: 3 }).toArray()).length, 3, 'a page without sort stops at its end')
})
