/**
 * Webhooks (docs/reference/events.md#webhooks) delivered at least once, signed, retried, in order, to the subscribing tenant
 * only; a real receiver on 127.0.0.1 (allowed through WEBHOOK_ALLOWED_HOSTS).
 */
import t from 'tap'
import type { WebhookDeliveryPage } from '../../openapi/generated/schemas.js'
import { verifyWebhook } from '../../sdk/webhooks.js'
import { Collections, type StoredWebhookDelivery } from '../../store/collections.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { waitUntil } from '../../services/testing/wait.js'
import { completeTask, formTask, HR, openForm, startLeaveRequest, type WorkflowClient } from '../../services/testing/workflow.js'
import { createTestUser } from '../../services/testing/users.js'
import { deployExample } from '../../services/testing/models.js'
import { startReceiver, startWebhookStack, subscribe } from './support.js'

/** A subscription's deliveries, newest first, as the gateway lists them; `query` (e.g. `?status=delivered`) narrows the list. */
async function listDeliveries(gateway: WorkflowClient, subscriptionId: string, query = ''): Promise<WebhookDeliveryPage> {
  const answer = await gateway.call<Envelope<WebhookDeliveryPage>>(
    'listSubscriptionDeliveries',
    'GET',
    `/subscription/${subscriptionId}/deliveries${query}`,
  )
  return answer.body.data
}

t.test('a whole leave request delivers its events in order, each signed with the delivery id and event type in its body', async (t) => {
  const { engine, gateway } = await startWebhookStack(t)
  const receiver = await startReceiver(t)
  const subscription = await subscribe(gateway, receiver.url)
  const { employee, manager } = engine.users
  const started = await startLeaveRequest(engine, employee)
  const submitted = await completeTask(engine, employee, started.body)
  const approved = await completeTask(engine, manager, (await openForm(engine, manager, submitted.body)).body)
  t.equal(approved.body.context.processInstance.processStatus, 'completed')
  const instanceId = started.body.context.processInstance.processInstanceId

  await waitUntil(
    () => receiver.received.length,
    (count) => count >= 3,
  )
  t.same(
    receiver.received.map((request) => request.body.eventType),
    ['Created', 'TaskCompleted', 'Finished'],
    'in the order they happened',
  )
  for (const request of receiver.received) {
    const check = verifyWebhook(subscription.secret, request.headers, request.rawBody)
    t.match(
      check,
      { valid: true, deliveryId: request.body.deliveryId, eventType: request.body.eventType },
      `${request.body.eventType}: the signature verifies`,
    )
    t.equal(request.headers['x-workflow-event'], request.body.eventType)
    t.equal(request.headers['x-workflow-delivery'], request.body.deliveryId)
    t.equal(request.headers['content-type'], 'application/json')
    t.match(request.body, { ...HR, processId: 'leave-request', processInstance: { processInstanceId: instanceId } })
    t.notOk(
      verifyWebhook('a-wrong-secret-of-thirty-two-characters-!', request.headers, request.rawBody).valid,
      'another secret does not verify',
    )
    t.match(
      verifyWebhook(subscription.secret, { ...request.headers, 'x-workflow-delivery': 'a-fresh-id' }, request.rawBody),
      { valid: false, reason: /differs from the signed body/ },
      'the captured delivery resent with a new delivery header does not pass as a new delivery',
    )
    const { 'x-workflow-delivery': _delivery, 'x-workflow-event': _event, ...signedHeadersOnly } = request.headers
    t.match(
      verifyWebhook(subscription.secret, signedHeadersOnly, request.rawBody),
      { valid: true, deliveryId: request.body.deliveryId, eventType: request.body.eventType },
      'the delivery id and event type come from the signed body',
    )
  }
  t.match(receiver.received[1]?.body, { task: { stepId: 'approve', status: 'open' } }, 'the newest open task goes along')

  const deliveries = await listDeliveries(gateway, subscription.subscriptionId, '?appId=hr&organizationId=acme')
  await waitUntil(
    async () => (await listDeliveries(gateway, subscription.subscriptionId, '?status=delivered')).items.length,
    (count) => count === 3,
  )
  t.equal(deliveries.items.length, 3)
  t.same(
    deliveries.items.map((item) => item.eventType),
    ['Finished', 'TaskCompleted', 'Created'],
    'listed newest first',
  )
})

t.test(
  'a receiver answering 500 twice gets the third try with the same delivery id, and the deliveries list shows the tries',
  async (t) => {
    const { engine, gateway } = await startWebhookStack(t)
    const receiver = await startReceiver(t, (_request, count) => (count <= 2 ? 500 : 204))
    const subscription = await subscribe(gateway, receiver.url, { events: ['Created'] })
    await startLeaveRequest(engine, engine.users.employee)
    await waitUntil(
      () => receiver.received.length,
      (count) => count >= 3,
    )
    const ids = receiver.received.map((request) => request.headers['x-workflow-delivery'])
    t.equal(new Set(ids).size, 1, `one delivery id on every try (${ids.join(', ')})`)
    const timestamps = receiver.received.map((request) => Number(request.headers['x-workflow-timestamp']))
    t.ok(
      timestamps.every((timestamp, index) => index === 0 || timestamp >= timestamps[index - 1]!),
      'each try is signed at its own time',
    )
    const page = await waitUntil(
      () => listDeliveries(gateway, subscription.subscriptionId),
      (data) => data.items[0]?.status === 'delivered',
    )
    t.match(page.items, [{ deliveryId: ids[0], eventType: 'Created', status: 'delivered', tries: 3, lastStatusCode: 204, lastError: null }])
    t.ok(page.items[0]?.deliveredAt, 'deliveredAt is set')
    // A later event delivered: the worker has gone on polling since, and the first one did not come again.
    await startLeaveRequest(engine, engine.users.employee)
    await waitUntil(
      () => receiver.received.length,
      (count) => count >= 4,
    )
    const laterIds = receiver.received.slice(3).map((request) => request.headers['x-workflow-delivery'])
    t.equal(laterIds.length, 1, 'the later event once')
    t.not(laterIds[0], ids[0], 'nothing more is sent once it was delivered')
  },
)

t.test('a receiver down for a while gets every event, in order, once it is back; redeliver sends one again', async (t) => {
  const { engine, gateway } = await startWebhookStack(t)
  const receiver = await startReceiver(t)
  const subscription = await subscribe(gateway, receiver.url)
  await receiver.close()
  const { employee, manager } = engine.users
  const started = await startLeaveRequest(engine, employee)
  const submitted = await completeTask(engine, employee, started.body)
  await completeTask(engine, manager, (await openForm(engine, manager, submitted.body)).body)
  const second = await startLeaveRequest(engine, employee, { days: 1, reason: 'Dentist' })
  const failing = await waitUntil(
    async () => (await listDeliveries(gateway, subscription.subscriptionId)).items,
    (items) => items.some((item) => item.tries >= 2),
  )
  t.ok(
    failing.every((item) => item.status !== 'delivered' && item.lastStatusCode === null),
    'not delivered while the receiver is down',
  )
  t.match(failing.find((item) => item.tries >= 1)?.lastError, /ECONNREFUSED|connect/, 'the reason is kept')
  await receiver.open()
  await waitUntil(
    () => receiver.received.length,
    (count) => count >= 4,
    10_000,
  )
  const first = started.body.context.processInstance.processInstanceId
  t.same(
    receiver.received
      .filter((request) => request.body.processInstance.processInstanceId === first)
      .map((request) => request.body.eventType),
    ['Created', 'TaskCompleted', 'Finished'],
    "the first instance's events in order",
  )
  t.same(
    receiver.received
      .filter((request) => request.body.processInstance.processInstanceId === second.body.context.processInstance.processInstanceId)
      .map((request) => request.body.eventType),
    ['Created'],
  )

  const created = receiver.received[0]!.body.deliveryId
  const redelivered = await gateway.call<Envelope<{ message: string }>>(
    'redeliverWebhook',
    'POST',
    `/subscription/${subscription.subscriptionId}/redeliver`,
    { body: { deliveryId: created, ...HR } },
  )
  t.same(redelivered.body, { status: 'success', data: { message: 'Delivery queued' } })
  await waitUntil(
    () => receiver.received.length,
    (count) => count >= 5,
  )
  t.equal(receiver.received[4]?.body.deliveryId, created, 'the same delivery again, with its id')
  const unknown = await gateway.call<Envelope<null>>('redeliverWebhook', 'POST', `/subscription/${subscription.subscriptionId}/redeliver`, {
    body: { deliveryId: 'no-such-delivery' },
  })
  t.match(unknown, { status: 404, body: { error: { code: 'fm3052' } } })
})

t.test("another tenant's events never reach a subscription, and processIds narrows it to those processes", async (t) => {
  const { engine, gateway } = await startWebhookStack(t)
  const receiver = await startReceiver(t)
  const others = await startReceiver(t)
  await subscribe(gateway, receiver.url, { events: ['Created'] })
  await subscribe(gateway, others.url, { events: ['Created'], appId: 'sales' })
  const purchasesOnly = await startReceiver(t)
  await subscribe(gateway, purchasesOnly.url, { events: ['Created'], processIds: ['purchase'] })
  // The sales app has the same leave-request process, so only the tenant tells the two apart.
  await deployExample(engine.store, 'leave-request', { appId: 'sales', organizationId: 'acme' })
  const salesEmployee = await createTestUser(engine.store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sue Sales',
    swimlanes: ['employee'],
  })
  const sales = await engine.call<{ context: { processInstance: { processInstanceId: string } } }>('openContext', 'POST', '/context', {
    user: salesEmployee.userId,
    body: { appId: 'sales', organizationId: 'acme', processId: 'leave-request', input: { days: 2, reason: 'Sales trip' } },
  })
  t.equal(sales.status, 200)
  const hr = await startLeaveRequest(engine, engine.users.employee)
  await waitUntil(
    () => receiver.received.length + others.received.length,
    (count) => count >= 2,
  )
  // Every delivery the two starts made is settled: nothing more is on its way to any receiver.
  const settled = await waitUntil(
    () => engine.store.collection<StoredWebhookDelivery>(Collections.webhookDeliveries).find({}).toArray(),
    (deliveries) => deliveries.every((delivery) => delivery.status === 'delivered' || delivery.status === 'failed'),
  )
  t.ok(
    settled.every((delivery) => delivery.status === 'delivered'),
    'all delivered',
  )
  t.same(
    receiver.received.map((request) => request.body.processInstance.processInstanceId),
    [hr.body.context.processInstance.processInstanceId],
    'hr gets its own instance only',
  )
  t.same(
    others.received.map((request) => request.body.processInstance.processInstanceId),
    [sales.body.context.processInstance.processInstanceId],
    'sales gets its own instance only',
  )
  t.same(
    others.received.map((request) => request.body.appId),
    ['sales'],
  )
  t.equal(purchasesOnly.received.length, 0, 'a leave request is not a purchase')
  t.equal(formTask(hr.body).stepId, 'request')
})
