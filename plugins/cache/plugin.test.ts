import t from 'tap'
import { Collections, type StoredCacheInvalidation } from '../../store/collections.js'
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
