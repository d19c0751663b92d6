import t from 'tap'
import type { CreatedSubscription, SubscriptionSummary, WebhookDeliveryPage } from '../../../openapi/generated/schemas.js'
import { Collections, type StoredWebhookDelivery } from '../../../store/collections.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'
import { bearerFor, jwtAuthConfig } from '../../testing/tokens.js'
import { createTestUser } from '../../testing/users.js'

const TENANT = { organizationId: 'acme', appId: 'hr' }
const ALLOWED = { webhooks: { allowedHosts: ['127.0.0.1:9999', 'hooks.internal'], timeoutMs: 1_000, backoffMs: 10 } }

function delivery(subscriptionId: string, n: number, status: StoredWebhookDelivery['status'] = 'delivered'): StoredWebhookDelivery {
  const at = new Date(Date.UTC(2025, 6, 1, 10, 0, n))
  return {
    _id: `d-${String(n).padStart(2, '0')}`,
    subscriptionId,
    ...TENANT,
    processId: 'leave-request',
    processInstanceId: `pi-${n}`,
    eventType: 'Created',
    orderKey: `${subscriptionId} pi-${n}`,
    sequence: 1,
    body: '{}',
    status,
    tries: 1,
    dueAt: at,
    createdAt: at,
    ...(status === 'delivered' ? { deliveredAt: at, lastStatusCode: 200 } : {}),
  }
}

t.test(
  "create answers the secret once (generated, 43 characters, when not given); list shows the tenant's subscriptions without it",
  async (t) => {
    const { gateway, client } = await startGateway(t, { config: ALLOWED })
    const created = await client.call<Envelope<CreatedSubscription>>('createSubscription', 'POST', '/subscription/create', {
      body: { url: 'http://127.0.0.1:9999/hooks', events: ['Created', 'Finished'], ...TENANT },
    })
    t.equal(created.status, 200)
    t.match(created.body.data, { url: 'http://127.0.0.1:9999/hooks', events: ['Created', 'Finished'], processIds: [], ...TENANT })
    t.match(created.body.data.secret, /^[A-Za-z0-9_-]{43}$/)
    const chosen = await client.call<Envelope<CreatedSubscription>>('createSubscription', 'POST', '/subscription/create', {
      body: { url: 'https://127.0.0.1:9999/x', events: ['Assigned'], processIds: ['purchase'], secret: 's'.repeat(32), ...TENANT },
    })
    t.equal(chosen.body.data.secret, 's'.repeat(32), 'a given secret is kept')
    await client.call('createSubscription', 'POST', '/subscription/create', {
      body: { url: 'http://127.0.0.1:9999/sales', events: ['Created'], organizationId: 'acme', appId: 'sales' },
    })
    const listed = await client.call<Envelope<SubscriptionSummary[]>>(
      'listSubscriptions',
      'GET',
      '/subscription/list?organizationId=acme&appId=hr',
    )
    t.same(
      listed.body.data.map((subscription) => subscription.subscriptionId),
      [created.body.data.subscriptionId, chosen.body.data.subscriptionId],
      "the tenant's own, oldest first",
    )
    t.notOk(JSON.stringify(listed.body.data).includes('secret'), 'no secret is listed')
    t.equal(
      (await gateway.app.store.collection(Collections.webhookSubscriptions).findOne({ _id: chosen.body.data.subscriptionId }))?.secret,
      's'.repeat(32),
      'stored for signing',
    )
    t.match(
      await client.call('listSubscriptions', 'GET', '/subscription/list?appId=hr'),
      { status: 400, body: { error: { code: 'fm4000' } } },
      'the tenant is required',
    )
  },
)

t.test(
  'a URL that is not http(s), a loopback or private address not in WEBHOOK_ALLOWED_HOSTS, or the service itself ' +
    'is refused at create (400 fm3050), nothing stored',
  async (t) => {
    const { gateway, client } = await startGateway(t, { config: { webhooks: { allowedHosts: [], timeoutMs: 1_000, backoffMs: 10 } } })
    const port = new URL(gateway.url).port
    const refused = [
      'ftp://example.org/hooks',
      'not a url',
      'http://127.0.0.1:9999/hooks',
      'http://localhost:9999/hooks',
      'http://[::1]:9999/hooks',
      'http://2130706433/hooks',
      'http://0x7f.1/hooks',
      'http://[::ffff:127.0.0.1]/hooks',
      'http://0.0.0.0/hooks',
      'http://10.1.2.3/hooks',
      'http://192.168.1.1/hooks',
      'http://169.254.169.254/latest/meta-data',
    ]
    for (const url of refused) {
      const answer = await client.call<Envelope<null>>('createSubscription', 'POST', '/subscription/create', {
        body: { url, events: ['Created'], ...TENANT },
      })
      t.match(answer, { status: 400, body: { status: 'customerror', error: { code: 'fm3050' } } }, url)
    }
    const own = await startGateway(t, { config: { webhooks: { allowedHosts: ['127.0.0.1'], timeoutMs: 1_000, backoffMs: 10 } } })
    const itself = await own.client.call<Envelope<null>>('createSubscription', 'POST', '/subscription/create', {
      body: { url: `${own.gateway.url}/liveness`, events: ['Created'], ...TENANT },
    })
    t.match(
      itself,
      { status: 400, body: { error: { code: 'fm3050', message: /this service itself/ } } },
      "not even an allowed host on the service's own port",
    )
    const message = (
      await client.call<Envelope<null>>('createSubscription', 'POST', '/subscription/create', {
        body: { url: 'http://127.0.0.1:9999/', events: ['Created'], ...TENANT },
      })
    ).body.error?.message
    t.match(message, /not listed in WEBHOOK_ALLOWED_HOSTS/, 'the reason names the allow-list')
    for (const body of [
      { url: 'http://1.1.1.1/', events: [], ...TENANT },
      { url: 'http://1.1.1.1/', events: ['Nope'], ...TENANT },
      { url: 'http://1.1.1.1/', events: ['Created'], secret: 'short', ...TENANT },
      { url: 'http://1.1.1.1/', events: ['Created'] },
    ]) {
      t.match(
        await client.call('createSubscription', 'POST', '/subscription/create', { body }),
        { status: 400, body: { error: { code: 'fm4000' } } },
        JSON.stringify(body),
      )
    }
    t.equal(await gateway.app.store.collection(Collections.webhookSubscriptions).countDocuments({}), 0, 'nothing stored')
    t.equal(port.length > 0, true)
  },
)

t.test(
  'deliveries are listed newest first, a page at a time, filtered by status; delete removes the subscription and its deliveries',
  async (t) => {
    const { gateway, client } = await startGateway(t, { config: ALLOWED })
    const created = (
      await client.call<Envelope<CreatedSubscription>>('createSubscription', 'POST', '/subscription/create', {
        body: { url: 'http://127.0.0.1:9999/', events: ['Created'], ...TENANT },
      })
    ).body.data
    const id = created.subscriptionId
    const deliveries = gateway.app.store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries)
    await deliveries.insertMany([1, 2, 3, 4, 5].map((n) => delivery(id, n, n === 4 ? 'failed' : 'delivered')))
    await deliveries.insertOne(delivery('another-subscription', 6))
    const first = await client.call<Envelope<WebhookDeliveryPage>>(
      'listSubscriptionDeliveries',
      'GET',
      `/subscription/${id}/deliveries?limit=2`,
    )
    t.same(
      first.body.data.items.map((item) => item.deliveryId),
      ['d-05', 'd-04'],
    )
    t.match(first.body.data.items[0], {
      eventType: 'Created',
      processInstanceId: 'pi-5',
      status: 'delivered',
      tries: 1,
      lastStatusCode: 200,
      lastError: null,
      createdAt: '2025-07-01T10:00:05.000Z',
      deliveredAt: '2025-07-01T10:00:05.000Z',
    })
    const second = await client.call<Envelope<WebhookDeliveryPage>>(
      'listSubscriptionDeliveries',
      'GET',
      `/subscription/${id}/deliveries?limit=2&cursor=${first.body.data.nextCursor}`,
    )
    const third = await client.call<Envelope<WebhookDeliveryPage>>(
      'listSubscriptionDeliveries',
      'GET',
      `/subscription/${id}/deliveries?limit=2&cursor=${second.body.data.nextCursor}`,
    )
    t.same(
      [...second.body.data.items, ...third.body.data.items].map((item) => item.deliveryId),
      ['d-03', 'd-02', 'd-01'],
    )
    t.equal(third.body.data.nextCursor, undefined, 'the last page has no cursor')
    const failed = await client.call<Envelope<WebhookDeliveryPage>>(
      'listSubscriptionDeliveries',
      'GET',
      `/subscription/${id}/deliveries?status=failed`,
    )
    t.same(
      failed.body.data.items.map((item) => item.deliveryId),
      ['d-04'],
    )
    t.match(await client.call('listSubscriptionDeliveries', 'GET', `/subscription/${id}/deliveries?cursor=bogus`), {
      status: 400,
      body: { error: { code: 'fm4000' } },
    })
    t.match(
      await client.call('listSubscriptionDeliveries', 'GET', `/subscription/${id}/deliveries?organizationId=acme&appId=sales`),
      { status: 404, body: { error: { code: 'fm3051' } } },
      'another tenant does not see it',
    )

    t.match(
      await client.call('deleteSubscription', 'DELETE', '/subscription/delete?organizationId=acme&appId=sales', { body: { id } }),
      { status: 404, body: { error: { code: 'fm3051' } } },
      'nor delete it',
    )
    t.same(
      (await client.call('deleteSubscription', 'DELETE', '/subscription/delete?organizationId=acme&appId=hr', { body: { id } })).body,
      { status: 'success', data: { message: 'Subscription deleted' } },
    )
    t.equal(await deliveries.countDocuments({ subscriptionId: id }), 0, 'its deliveries are gone')
    t.equal(await deliveries.countDocuments({}), 1, "another subscription's are kept")
    t.match(
      await client.call('deleteSubscription', 'DELETE', '/subscription/delete', { body: { id } }),
      { status: 404, body: { error: { code: 'fm3051' } } },
      'unknown now',
    )
  },
)

t.test('redeliver queues a settled delivery again with tries 0, refuses one being tried (409) or unknown (404)', async (t) => {
  const { gateway, client } = await startGateway(t, { config: ALLOWED })
  const id = (
    await client.call<Envelope<CreatedSubscription>>('createSubscription', 'POST', '/subscription/create', {
      body: { url: 'http://127.0.0.1:9999/', events: ['Created'], ...TENANT },
    })
  ).body.data.subscriptionId
  const deliveries = gateway.app.store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries)
  await deliveries.insertMany([
    { ...delivery(id, 1, 'failed'), tries: 10, lastError: 'the receiver answered 500' },
    delivery(id, 2, 'delivering'),
  ])
  const queued = await client.call<Envelope<{ message: string }>>('redeliverWebhook', 'POST', `/subscription/${id}/redeliver`, {
    body: { deliveryId: 'd-01' },
  })
  t.same(queued.body, { status: 'success', data: { message: 'Delivery queued' } })
  t.match(await deliveries.findOne({ _id: 'd-01' }), { status: 'pending', tries: 0, lastError: 'the receiver answered 500' })
  t.match(await client.call('redeliverWebhook', 'POST', `/subscription/${id}/redeliver`, { body: { deliveryId: 'd-02' } }), {
    status: 409,
    body: { error: { code: 'fm3053' } },
  })
  t.match(await client.call('redeliverWebhook', 'POST', `/subscription/${id}/redeliver`, { body: { deliveryId: 'd-09' } }), {
    status: 404,
    body: { error: { code: 'fm3052' } },
  })
  t.match(await client.call('redeliverWebhook', 'POST', '/subscription/unknown/redeliver', { body: { deliveryId: 'd-01' } }), {
    status: 404,
    body: { error: { code: 'fm3051' } },
  })
  t.match(
    await client.call('redeliverWebhook', 'POST', `/subscription/${id}/redeliver`, { body: { deliveryId: 'd-01', appId: 'sales' } }),
    { status: 404, body: { error: { code: 'fm3051' } } },
    'not from another tenant',
  )
})

t.test(
  'protected like the other admin endpoints: ADMIN_TOKEN when set; in jwt mode a tenant admin acts in its own tenant only',
  async (t) => {
    const adminToken = 'admin-token-0123456789'
    const { client } = await startGateway(t, { config: { ...ALLOWED, adminToken } })
    const body = { url: 'http://127.0.0.1:9999/', events: ['Created'], ...TENANT }
    t.match(await client.call('createSubscription', 'POST', '/subscription/create', { body }), {
      status: 401,
      body: { status: 'permissionError', error: { code: 'fm4010' } },
    })
    t.match(await client.call('listSubscriptions', 'GET', '/subscription/list?organizationId=acme&appId=hr'), { status: 401 })
    t.equal(
      (
        await client.call('createSubscription', 'POST', '/subscription/create', {
          body,
          headers: { authorization: `Bearer ${adminToken}` },
        })
      ).status,
      200,
    )

    const jwt = await startGateway(t, { config: { ...ALLOWED, ...jwtAuthConfig() } })
    const admin = await createTestUser(jwt.gateway.app.store, { ...TENANT, fullName: 'Ada Admin', roles: ['admin'] })
    const employee = await createTestUser(jwt.gateway.app.store, { ...TENANT, fullName: 'Eve Employee', roles: ['user'] })
    const asAdmin = await bearerFor(admin.userId)
    t.match(
      await jwt.client.call('createSubscription', 'POST', '/subscription/create', { body, headers: await bearerFor(employee.userId) }),
      { status: 403, body: { error: { code: 'fm4030' } } },
      'not by a user who is no admin',
    )
    t.match(
      await jwt.client.call('createSubscription', 'POST', '/subscription/create', { body: { ...body, appId: 'sales' }, headers: asAdmin }),
      { status: 403, body: { error: { code: 'fm4030' } } },
      'not into another tenant',
    )
    t.equal((await jwt.client.call('createSubscription', 'POST', '/subscription/create', { body, headers: asAdmin })).status, 200)
    t.match(await jwt.client.call('listSubscriptions', 'GET', '/subscription/list?organizationId=acme&appId=sales', { headers: asAdmin }), {
      status: 403,
    })
    t.equal(
      (
        await jwt.client.call<Envelope<SubscriptionSummary[]>>(
          'listSubscriptions',
          'GET',
          '/subscription/list?organizationId=acme&appId=hr',
          { headers: asAdmin },
        )
      ).body.data.length,
      1,
    )
  },
)
