import t from 'tap'
import { readThrough } from './read-through.js'
import { CacheRegistry } from './registry.js'

/** A registry whose `upToDate` counts its calls, and a store read that counts its own. */
function setup(): { registry: CacheRegistry; catchUps: () => number; reads: () => number; read: () => Promise<string> } {
  const registry = new CacheRegistry()
  let catchUps = 0
  let reads = 0
  registry.followInvalidations(async () => {
    catchUps++
  })
  return { registry, catchUps: () => catchUps, reads: () => reads, read: async () => `value ${++reads}` }
}

t.test('a cached value is served until it is older than maxAgeMs, after the invalidations are applied each time', async (t) => {
  const { registry, catchUps, reads, read } = setup()
  let now = 1_000
  const options = { maxAgeMs: 100, now: () => now }
  t.equal(await readThrough(registry, 'users', 'k', read, options), 'value 1')
  now += 99
  t.equal(await readThrough(registry, 'users', 'k', read, options), 'value 1', 'served from the cache')
  now += 1
  t.equal(await readThrough(registry, 'users', 'k', read, options), 'value 2', 'read again once it lapsed')
  t.same([reads(), catchUps()], [2, 3], 'every call applied the invalidations first')
})

t.test('an eviction drops the value, and a value read before an eviction is not cached after it', async (t) => {
  const { registry, read } = setup()
  const options = { maxAgeMs: 60_000 }
  await readThrough(registry, 'users', 'k', read, options)
  registry.evict('users')
  t.equal(await readThrough(registry, 'users', 'k', read, options), 'value 2', 'evicted: read again')
  registry.evict('users')
  const racing = readThrough(
    registry,
    'users',
    'k',
    async () => {
      registry.evict('users') // a write elsewhere is applied while this read is under way
      return 'stale'
    },
    options,
  )
  t.equal(await racing, 'stale', 'the read itself answers what it read')
  t.equal(await readThrough(registry, 'users', 'k', read, options), 'value 3', 'but it was not cached')
})

t.test('a value `keep` refuses (a miss) is not cached', async (t) => {
  const { registry, reads } = setup()
  let found: string | null = null
  const options = { maxAgeMs: 60_000, keep: (value: string | null) => value !== null }
  t.equal(await readThrough(registry, 'users', 'k', async () => found, options), null)
  found = 'created since'
  t.equal(await readThrough(registry, 'users', 'k', async () => found, options), 'created since', 'the miss was not kept')
  t.equal(reads(), 0)
})
