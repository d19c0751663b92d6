import type { RouteOptions } from 'fastify'
import t from 'tap'
import { buildService } from '../../services/build.js'
import { Collections } from '../../store/collections.js'
import { ContractChecker } from '../../services/testing/contract.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { openTestStore, silentLogger, startService, testConfig } from '../../services/testing/harness.js'
import { insertModelRequest } from '../../services/testing/models.js'

const ADMIN_TOKEN = 'admin-token-0123456789'
const contract = new ContractChecker('gateway')
const user = { fullName: 'Ada Lovelace', unit: { id: 'u', name: 'U' }, roles: ['employee'], organizationId: 'acme', appId: 'hr' }

/** The admin endpoints (docs/reference/identity.md#admin-endpoints: users, models, cache, notify), one request each. */
const adminRequests: Array<[operationId: string, method: string, path: string, body?: unknown]> = [
  ['createUser', 'POST', '/user/createUser', user],
  ['updateUser', 'POST', '/user/updateUser', { ...user, userId: 'u-1' }],
  ['deleteUser', 'DELETE', '/user/deleteUser', { id: 'u-1' }],
  ['getUserById', 'GET', '/user/getUserById/u-1'],
  ['listWorkflowUsers', 'GET', '/user/listWorkflowUsers?organizationId=acme&appId=hr'],
  ['insertModel', 'POST', '/model/insertModel', insertModelRequest('leave-form', { appId: 'hr', organizationId: 'acme' })],
  ['evictCache', 'GET', '/external/cache/app/fm/evict'],
  ['upsertNotification', 'POST', '/notify', { notificationObject: { processInstance: { processInstanceId: 'pi-1' } } }],
  [
    'createSubscription',
    'POST',
    '/subscription/create',
    { url: 'https://hooks.example.com/x', events: ['Created'], organizationId: 'acme', appId: 'hr' },
  ],
  ['listSubscriptions', 'GET', '/subscription/list?organizationId=acme&appId=hr'],
  ['deleteSubscription', 'DELETE', '/subscription/delete', { id: 's-1' }],
  ['listSubscriptionDeliveries', 'GET', '/subscription/s-1/deliveries?organizationId=acme&appId=hr'],
  ['redeliverWebhook', 'POST', '/subscription/s-1/redeliver', { deliveryId: 'd-1' }],
]

function send(url: string, method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  })
}

t.test('with ADMIN_TOKEN set, every admin endpoint answers 401 permissionError without the bearer token and writes nothing', async (t) => {
  const gateway = await startService(t, 'gateway', { config: { adminToken: ADMIN_TOKEN } })
  for (const [operationId, method, path, body] of adminRequests) {
    for (const headers of [
      {} as Record<string, string>,
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: ADMIN_TOKEN },
      { authorization: `Basic ${ADMIN_TOKEN}` },
    ]) {
      const answer = await send(gateway.url, method, path, body, headers)
      const envelope = (await answer.json()) as Envelope<null>
      t.equal(answer.status, 401, `${operationId} ${JSON.stringify(headers)}`)
      t.match(envelope, { status: 'permissionError', error: { code: 'fm4010' } })
      t.same(contract.errors(operationId, 401, envelope), [])
    }
  }
  const collections = [
    Collections.users,
    Collections.models,
    Collections.cacheInvalidations,
    Collections.notifications,
    Collections.webhookSubscriptions,
  ]
  for (const collection of collections) {
    t.equal(await gateway.app.store.collection(collection).countDocuments({}), 0, `nothing in ${collection}`)
  }
})

t.test('with the right bearer token the admin endpoints work; the public ones never need it', async (t) => {
  const gateway = await startService(t, 'gateway', { config: { adminToken: ADMIN_TOKEN } })
  const authorization = { authorization: `Bearer ${ADMIN_TOKEN}` }
  t.equal((await send(gateway.url, 'POST', '/user/createUser', user, authorization)).status, 200)
  t.equal(
    (
      await send(
        gateway.url,
        'POST',
        '/model/insertModel',
        insertModelRequest('leave-form', { appId: 'hr', organizationId: 'acme' }),
        authorization,
      )
    ).status,
    200,
  )
  t.equal(
    (await send(gateway.url, 'GET', '/external/cache/app/fm/evict', undefined, { authorization: `bearer ${ADMIN_TOKEN}` })).status,
    200,
    'the scheme is case-insensitive',
  )
  t.equal(
    (await send(gateway.url, 'GET', '/model/getModel/leave-form?appId=hr', undefined, authorization)).status,
    200,
    'getModel answers the admin token',
  )
  t.equal((await send(gateway.url, 'GET', '/model/getModel/leave-form?appId=hr', undefined)).status, 401, 'and nobody unidentified')
  t.equal((await send(gateway.url, 'GET', '/healthcheck', undefined)).status, 200)
})

t.test('without ADMIN_TOKEN the admin endpoints are open (development)', async (t) => {
  const gateway = await startService(t, 'gateway')
  t.equal((await send(gateway.url, 'POST', '/user/createUser', user)).status, 200)
  t.equal((await send(gateway.url, 'GET', '/external/cache/app/fm/evict', undefined)).status, 200)
})

t.test("the check is a hook of the admin routes alone: every other route, the proxy's among them, runs none", async (t) => {
  /** The number of route-level onRequest hooks of every route, by `METHOD url`. */
  const routeHooks = async (adminToken: string | undefined): Promise<Map<string, number>> => {
    const routes: RouteOptions[] = []
    const app = await buildService('gateway', {
      config: testConfig({ adminToken }),
      store: await openTestStore(t),
      logger: silentLogger,
      onRoute: (route) => void routes.push(route),
    })
    await app.close()
    // Read once every onRoute hook has run: the plugin's runs after the one that collects.
    return new Map(
      routes.flatMap((route) =>
        [route.method].flat().map((method) => [`${method} ${route.url}`, [route.onRequest ?? []].flat().length] as const),
      ),
    )
  }
  const open = await routeHooks(undefined)
  const guarded = await routeHooks(ADMIN_TOKEN)
  const added = (route: string): number => (guarded.get(route) ?? NaN) - (open.get(route) ?? NaN)
  t.equal(added('POST /user/createUser'), 1, 'an admin route checks the token')
  t.equal(added('GET /external/cache/:cacheType/:cacheTarget/evict'), 1, 'so does the cache eviction')
  t.equal(added('GET /model/getModel/:id'), 0, 'a public route does not')
  t.equal(added('GET /process/:processInstanceId'), 0, 'a proxied route does not')
  // The user reads (getUserById, listWorkflowUsers) resolve their optional caller with the same hook
  // whether or not ADMIN_TOKEN is set, so the token adds a hook to the other admin routes only.
  const changed = [...guarded.keys()].filter((route) => added(route) !== 0 && !route.startsWith('HEAD '))
  const readsWithCaller = ['GET /user/getUserById/:userId', 'GET /user/listWorkflowUsers']
  for (const route of readsWithCaller) t.equal(open.get(route), 1, `${route} resolves its caller in any case`)
  t.equal(changed.length, adminRequests.length - readsWithCaller.length, `only the admin routes changed: ${changed.join(', ')}`)
})
