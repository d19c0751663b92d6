import t from 'tap'
import { Collections, type StoredCacheInvalidation, type StoredCounter } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { openTestStore } from '../../services/testing/harness.js'
import { InvalidationPoller, LATE_RECORD_WINDOW_MS, recordInvalidation } from './invalidations.js'
import { CacheRegistry } from './registry.js'

function filledRegistry(): CacheRegistry {
  const registry = new CacheRegistry()
  for (const type of ['app', 'service', 'swagger']) {
    registry.cache(type).set('a', 1)
    registry.cache(type).set('b', 2)
  }
  return registry
}

t.test('a poller applies the records aimed at its service or at all, each once', async (t) => {
  const store = await openTestStore(t)
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'wfm', registry)
  await poller.skipExisting()
  await recordInvalidation(store, { target: 'fm', cacheType: 'app' })
  t.equal(await poller.poll(), 0, 'a gateway record is not for the engine')
  t.equal(registry.cache('app').size, 2)
  await recordInvalidation(store, { target: 'wfm', cacheType: 'service', id: 'a' })
  await recordInvalidation(store, { target: 'all', cacheType: 'app' })
  t.equal(await poller.poll(), 2)
  t.same([registry.cache('service').get('a'), registry.cache('service').get('b'), registry.cache('app').size], [undefined, 2, 0])
  registry.cache('app').set('a', 1)
  t.equal(await poller.poll(), 0, 'a record is applied only once')
  t.equal(registry.cache('app').size, 1)
})

t.test('records written before the instance started are skipped', async (t) => {
  const store = await openTestStore(t)
  await recordInvalidation(store, { target: 'all', cacheType: 'all' })
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'fm', registry)
  await poller.skipExisting()
  t.equal(await poller.poll(), 0)
  t.equal(registry.cache('app').size, 2)
})

t.test('a record that becomes visible after a higher sequence is still applied', async (t) => {
  const store = await openTestStore(t)
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'fm', registry)
  await poller.skipExisting()
  const invalidations = store.collection<StoredCacheInvalidation>(Collections.cacheInvalidations)
  const now = Date.now()
  await invalidations.insertOne({ target: 'fm', cacheType: 'swagger', sequence: 2, createdAt: new Date(now) })
  t.equal(await poller.poll(now), 1)
  // Sequence 1 was handed out first but its insert landed later (a slow writer).
  await invalidations.insertOne({ target: 'fm', cacheType: 'app', sequence: 1, createdAt: new Date(now) })
  t.equal(await poller.poll(now + 100), 1, 'the late record is applied')
  t.equal(registry.cache('app').size, 0)
  t.equal(await poller.poll(now + LATE_RECORD_WINDOW_MS + 1000), 0, 'and never again')
})

t.test('concurrent records get distinct, increasing sequence numbers', async (t) => {
  const store = await openTestStore(t)
  const records = await Promise.all(Array.from({ length: 20 }, () => recordInvalidation(store, { target: 'all', cacheType: 'app' })))
  t.same(
    records.map((record) => record.sequence).sort((a, b) => a - b),
    Array.from({ length: 20 }, (_, n) => n + 1),
  )
})

/**
 * The store, counting the calls of `method` on one collection; `hideVersions` leaves out
 * Store.versionToken, as MongoDB's store does.
 */
function countingCalls(store: Store, collectionName: string, method: string, hideVersions = false): { store: Store; calls: () => number } {
  let calls = 0
  const counted = new Proxy(store, {
    get(target, property, receiver) {
      if (property === 'versionToken' && hideVersions) return undefined
      if (property !== 'collection') return Reflect.get(target, property, receiver) as unknown
      return (name: string) => {
        const collection = target.collection(name)
        if (name !== collectionName) return collection
        return new Proxy(collection, {
          get(inner, key, innerReceiver) {
            if (key === method) calls++
            return Reflect.get(inner, key, innerReceiver) as unknown
          },
        })
      }
    },
  })
  return { store: counted, calls: () => calls }
}

/** The store, counting the reads of the invalidation records (the polls). */
function countingPolls(store: Store): { store: Store; polls: () => number } {
  const { store: counted, calls } = countingCalls(store, Collections.cacheInvalidations, 'find')
  return { store: counted, polls: calls }
}

/** The store, counting the reads of the invalidation counter. */
function countingCounterReads(store: Store, hideVersions = false): { store: Store; reads: () => number } {
  const { store: counted, calls } = countingCalls(store, Collections.counters, 'findOne', hideVersions)
  return { store: counted, reads: calls }
}

t.test('catchUp applies at once what was recorded before it, and polls only when the counter moved', async (t) => {
  const { store, polls } = countingPolls(await openTestStore(t))
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'wfm', registry)
  await poller.skipExisting()
  const before = polls()
  await poller.catchUp()
  t.equal(polls(), before, 'nothing recorded: the counter is read, the records are not')
  await recordInvalidation(store, { target: 'all', cacheType: 'app', id: 'a' })
  await poller.catchUp()
  t.same([registry.cache('app').get('a'), registry.cache('app').get('b')], [undefined, 2], 'the record is applied by the call')
  t.equal(polls(), before + 1)
  await poller.catchUp()
  t.equal(polls(), before + 1, 'applied records are not read again')
})

t.test('on the embedded store, catchUp reads the counter again only once it was written since a read found it settled', async (t) => {
  const { store, reads } = countingCounterReads(await openTestStore(t))
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'wfm', registry)
  await recordInvalidation(store, { target: 'fm', cacheType: 'app' })
  await poller.skipExisting()
  await poller.catchUp()
  const settled = reads()
  await Promise.all(Array.from({ length: 5 }, () => poller.catchUp()))
  t.equal(reads(), settled, 'the counter unchanged since a settled read: not read again')
  await recordInvalidation(store, { target: 'wfm', cacheType: 'app', id: 'a' })
  await poller.catchUp()
  t.equal(registry.cache('app').get('a'), undefined, 'a record written since is applied by the next call')
  t.ok(reads() > settled, 'which read the counter')
  const afterApplying = reads()
  await poller.catchUp()
  t.equal(reads(), afterApplying, 'applied, it is settled: not read again')
})

t.test('on a store that does not tell versions (MongoDB), catchUp reads the counter every time', async (t) => {
  const { store, reads } = countingCounterReads(await openTestStore(t), true)
  const poller = new InvalidationPoller(store, 'wfm', filledRegistry())
  await recordInvalidation(store, { target: 'fm', cacheType: 'app' })
  await poller.skipExisting()
  const before = reads()
  for (let call = 0; call < 3; call++) await poller.catchUp()
  t.equal(reads(), before + 3)
})

t.test('concurrent catchUps share one poll', async (t) => {
  const { store, polls } = countingPolls(await openTestStore(t))
  const poller = new InvalidationPoller(store, 'fm', filledRegistry())
  await poller.skipExisting()
  await recordInvalidation(store, { target: 'fm', cacheType: 'app' })
  const before = polls()
  await Promise.all(Array.from({ length: 10 }, () => poller.catchUp()))
  t.ok(polls() - before <= 2, `${polls() - before} polls for 10 callers`)
})

t.test('a sequence handed out whose record is not there yet is looked for again until it arrives, or the window passed', async (t) => {
  const { store, polls } = countingPolls(await openTestStore(t))
  const registry = filledRegistry()
  const poller = new InvalidationPoller(store, 'fm', registry)
  await poller.skipExisting()
  // A writer took sequence 1 and has not inserted its record (it has not answered its caller yet).
  await store
    .collection<StoredCounter>(Collections.counters)
    .findOneAndUpdate({ _id: Collections.cacheInvalidations }, { $inc: { value: 1 } }, { upsert: true })
  const now = Date.now()
  await poller.catchUp(now)
  const afterFirst = polls()
  await poller.catchUp(now + 10)
  t.equal(polls(), afterFirst + 1, 'the missing record is looked for again')
  await store
    .collection<StoredCacheInvalidation>(Collections.cacheInvalidations)
    .insertOne({ target: 'fm', cacheType: 'app', sequence: 1, createdAt: new Date(now) })
  await poller.catchUp(now + 20)
  t.equal(registry.cache('app').size, 0, 'the late record is applied')
  const settled = polls()
  await poller.catchUp(now + 30)
  t.equal(polls(), settled, 'and then nothing is read again')

  // A writer that died between the counter and its insert: given up after the late-record window.
  await store
    .collection<StoredCounter>(Collections.counters)
    .findOneAndUpdate({ _id: Collections.cacheInvalidations }, { $inc: { value: 1 } }, { upsert: true })
  await poller.catchUp(now + 40)
  await poller.catchUp(now + 40 + LATE_RECORD_WINDOW_MS + 1)
  const givenUp = polls()
  await poller.catchUp(now + 50 + LATE_RECORD_WINDOW_MS + 1)
  t.equal(polls(), givenUp, 'a record that never came is not looked for forever')
})
