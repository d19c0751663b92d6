import t, { type Test } from 'tap'
import type { OpenApiDocument } from '../../../plugins/docs/plugin.js'
import { Collections, type StoredCacheInvalidation } from '../../../store/collections.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'
import { openTestStore, startService } from '../../testing/harness.js'
import { insertModelRequest } from '../../testing/models.js'
import { createTestUser } from '../../testing/users.js'
import { waitUntil } from '../../testing/wait.js'
import { SWAGGER_CACHE_KEY } from '../app.js'
import { ALLOWED_CACHE_TYPES } from './service.js'

const HR = { appId: 'hr', organizationId: 'acme' }
const POLL_MS = 100
/** A poll interval no test outlives: what a test sees then comes from the check on read. */
const NO_POLL_MS = 3_600_000
/** "Within about a second" (CACHE_POLL_MS, docs/reference/gateway.md#caches), with room for a busy test machine. */
const PROPAGATION_LIMIT_MS = 1500

/** Resolves once `check` holds; fails the test when it still does not after `limitMs`. Answers the time taken. */
async function eventually(t: Test, name: string, check: () => boolean | Promise<boolean>, limitMs = PROPAGATION_LIMIT_MS): Promise<number> {
  const started = Date.now()
  const held = await waitUntil(check, (holds) => holds, limitMs, 20)
  const ms = Date.now() - started
  if (held) t.pass(`${name} (${ms} ms)`)
  else t.fail(`${name}: not within ${limitMs} ms`)
  return ms
}

t.test(
  'the documented table: allowed combinations are recorded, every other one (and id outside service/swagger) is 400 fm3030',
  async (t) => {
    const { gateway, client } = await startGateway(t)
    let allowed = 0
    for (const target of ['fm', 'wfm', 'all'] as const) {
      for (const type of ['app', 'all', 'swagger', 'endpoint', 'service']) {
        const answer = await client.call<Envelope<{ status: string }>>('evictCache', 'GET', `/external/cache/${type}/${target}/evict`)
        const expected = ALLOWED_CACHE_TYPES[target].includes(type)
        t.equal(answer.status, expected ? 200 : 400, `${type}/${target}`)
        if (expected) {
          allowed++
          t.same(answer.body, { status: 'success', data: { status: 'OK' } })
        } else t.equal(answer.body.error?.code, 'fm3030')
      }
    }
    t.equal(allowed, 11, 'fm allows 4 types, wfm 3, all 4')
    for (const [type, target, status] of [
      ['service', 'wfm', 200],
      ['swagger', 'fm', 200],
      ['swagger', 'all', 200],
      ['app', 'fm', 400],
      ['all', 'all', 400],
      ['endpoint', 'fm', 400],
    ] as const) {
      const answer = await client.call('evictCache', 'GET', `/external/cache/${type}/${target}/evict?id=one-key`)
      t.equal(answer.status, status, `${type}/${target} with id`)
      if (status === 200) allowed++
    }
    t.equal((await client.call('evictCache', 'GET', '/external/cache/app/gateway/evict')).status, 400, 'an unknown target')
    t.equal((await client.call('evictCache', 'GET', '/external/cache/models/fm/evict')).status, 400, 'an unknown type')
    const records = await gateway.app.store
      .collection<StoredCacheInvalidation>(Collections.cacheInvalidations)
      .find({}, { sort: { sequence: 1 } })
      .toArray()
    t.equal(records.length, allowed, 'one record per accepted call, none for a rejected one')
    t.match(records.at(-1), { target: 'all', cacheType: 'swagger', id: 'one-key' })
    t.same(
      records.map((record) => record.sequence),
      records.map((_, n) => n + 1),
      'records are numbered in order',
    )
  },
)

t.test('an eviction reaches every instance, gateways and engine, within about a second', async (t) => {
  const store = await openTestStore(t)
  // The default poll interval (CACHE_POLL_MS 1 s): what "within about a second" means in production.
  const config = {}
  const [gatewayA, gatewayB, engine] = [
    await startGateway(t, { store, config }),
    await startGateway(t, { store, config }),
    await startService(t, 'engine', { store, config }),
  ]
  const gateways = [gatewayA.gateway.app, gatewayB.gateway.app]
  for (const app of [...gateways, engine.app]) {
    for (const type of app.caches.types()) app.caches.cache(type).set('k1', 'cached')
    for (const type of app.caches.types()) app.caches.cache(type).set('k2', 'cached')
  }
  t.same(gateways[0]!.caches.types().sort(), ['app', 'endpoint', 'swagger', 'users'], 'the gateway caches of docs/reference/gateway.md#caches')
  t.same(engine.app.caches.types().sort(), ['app', 'service', 'users', 'webhookSubscriptions'], 'the engine caches of docs/reference/gateway.md#caches')

  await gatewayA.client.call('evictCache', 'GET', '/external/cache/endpoint/fm/evict')
  await eventually(t, 'endpoint evicted on both gateways', () => gateways.every((app) => app.caches.cache('endpoint').size === 0))
  t.equal(engine.app.caches.cache('app').size, 2, 'an fm eviction leaves the engine alone')

  await gatewayB.client.call('evictCache', 'GET', '/external/cache/service/wfm/evict?id=k1')
  await eventually(t, 'one service key evicted on the engine', () => engine.app.caches.cache('service').get('k1') === undefined)
  t.equal(engine.app.caches.cache('service').get('k2'), 'cached', 'the other key is kept')
  t.equal(gateways[0]!.caches.cache('app').size, 2, 'a wfm eviction leaves the gateways alone')

  await gatewayA.client.call('evictCache', 'GET', '/external/cache/all/all/evict')
  await eventually(t, 'everything evicted everywhere', () =>
    [...gateways, engine.app].every((app) => app.caches.types().every((type) => app.caches.cache(type).size === 0)),
  )
})

t.test('a model stored through one gateway is served by another at once, with no poll in between', async (t) => {
  const store = await openTestStore(t)
  const [gatewayA, gatewayB] = [
    await startGateway(t, { store, config: { cachePollMs: NO_POLL_MS } }),
    await startGateway(t, { store, config: { cachePollMs: NO_POLL_MS } }),
  ]
  await gatewayA.client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-form', HR) })
  const reader = await createTestUser(store, { ...HR, fullName: 'Hr Reader' })
  const version = async () =>
    (await fetch(`${gatewayB.gateway.url}/model/getModel/leave-form?appId=hr`, { headers: { user: reader.userId } })).headers
      .get('etag')
      ?.split('-')[2]
  t.equal(await version(), '1', 'B has cached version 1')
  await gatewayA.client.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('leave-form', HR) })
  t.equal(await version(), '2', "B's next read serves version 2")
})

t.test('an eviction is applied by the gateway that recorded it before it answers', async (t) => {
  const { gateway, client } = await startGateway(t, { config: { cachePollMs: NO_POLL_MS } })
  const endpoint = gateway.app.caches.cache('endpoint')
  endpoint.set('stale', 'cached')
  await client.call('evictCache', 'GET', '/external/cache/endpoint/fm/evict')
  t.equal(endpoint.get('stale'), undefined)
})

t.test('after a swagger eviction the gateway reads its OpenAPI document again', async (t) => {
  const store = await openTestStore(t)
  const [gatewayA, gatewayB] = [
    await startGateway(t, { store, config: { cachePollMs: POLL_MS } }),
    await startGateway(t, { store, config: { cachePollMs: POLL_MS } }),
  ]
  const title = async () => ((await (await fetch(`${gatewayB.gateway.url}/docs/json`)).json()) as { info: { title: string } }).info.title
  const original = await title()
  const swagger = gatewayB.gateway.app.caches.cache<OpenApiDocument>('swagger')
  t.ok(swagger.get(SWAGGER_CACHE_KEY), '/docs/json is served from the swagger cache')
  swagger.set(SWAGGER_CACHE_KEY, { ...swagger.get(SWAGGER_CACHE_KEY), info: { title: 'stale copy' } })
  t.equal(await title(), 'stale copy')
  await gatewayA.client.call('evictCache', 'GET', `/external/cache/swagger/fm/evict?id=${SWAGGER_CACHE_KEY}`)
  await eventually(t, 'the document is read again', async () => (await title()) === original)
})
