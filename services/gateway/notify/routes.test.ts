import t from 'tap'
import { Collections } from '../../../store/collections.js'
import { type Envelope, startGateway } from '../../testing/gateway.js'

const PI = 'pi-7'

t.test('POST /notify creates the record, then applies only the fields given, merging processInstance', async (t) => {
  const { gateway, client } = await startGateway(t)
  const first = await client.call<Envelope<{ message: string }>>('upsertNotification', 'POST', '/notify', {
    body: {
      appId: 'hr',
      organizationId: 'acme',
      notificationObject: {
        eventType: 'Created',
        onUs: true,
        processInstance: { processInstanceId: PI, businessKey: 'LR-1', processName: 'Leave' },
        informList: [{ header: 'Days: 3' }],
      },
    },
  })
  t.same(first.body, { status: 'success', data: { message: 'notified' } })
  await client.call('upsertNotification', 'POST', '/notify', {
    body: {
      notificationObject: {
        eventType: 'Updated',
        processInstance: { processInstanceId: PI, lastUpdate: '2025-07-01T10:00:00.000Z', businessKey: 'LR-2' },
      },
    },
  })
  const stored = await gateway.app.store.collection(Collections.notifications).findOne({ _id: PI })
  t.same(
    stored,
    {
      _id: PI,
      appId: 'hr',
      organizationId: 'acme',
      eventType: 'Updated',
      onUs: true,
      informList: [{ header: 'Days: 3' }],
      processInstance: { processInstanceId: PI, businessKey: 'LR-2', processName: 'Leave', lastUpdate: '2025-07-01T10:00:00.000Z' },
    },
    'eventType replaced, onUs and informList kept, processInstance fields merged',
  )
})

t.test('POST /notify without processInstance.processInstanceId is 400 wm3019 and writes nothing', async (t) => {
  const { gateway, client } = await startGateway(t)
  for (const notificationObject of [{ eventType: 'Updated' }, { processInstance: {} }, { processInstance: { processInstanceId: '' } }]) {
    const answer = await client.call<Envelope<null>>('upsertNotification', 'POST', '/notify', { body: { notificationObject } })
    t.equal(answer.status, 400, JSON.stringify(notificationObject))
    t.equal(answer.body.error?.code, 'wm3019', JSON.stringify(notificationObject))
  }
  t.equal((await client.call('upsertNotification', 'POST', '/notify', { body: {} })).status, 400, 'notificationObject is required')
  t.equal(await gateway.app.store.collection(Collections.notifications).countDocuments({}), 0)
})

t.test('keys such as __proto__, constructor or $set cannot pollute anything or reach the store as operators', async (t) => {
  const { gateway, client } = await startGateway(t)
  await client.call('upsertNotification', 'POST', '/notify', {
    body: { notificationObject: { eventType: 'Created', processInstance: { processInstanceId: PI } } },
  })
  const attacks = [
    '{"notificationObject":{"__proto__":{"polluted":true},"processInstance":{"processInstanceId":"pi-7"}}}',
    '{"notificationObject":{"processInstance":{"processInstanceId":"pi-7","__proto__":{"polluted":true}}}}',
    '{"notificationObject":{"processInstance":{"processInstanceId":"pi-7","constructor":{"prototype":{"polluted":true}}}}}',
    '{"notificationObject":{"task":{"constructor":{"prototype":{"polluted":true}}},"processInstance":{"processInstanceId":"pi-7"}}}',
    '{"notificationObject":{"processInstance":{"processInstanceId":"pi-7","$where":"1"}}}',
    '{"notificationObject":{"processInstance":{"processInstanceId":"pi-7","tasks.0.userId":"mallory"}}}',
    '{"notificationObject":{"_id":"pi-8","processInstance":{"processInstanceId":"pi-7"}}}',
  ]
  for (const body of attacks) {
    const answer = await fetch(`${gateway.url}/notify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    t.equal(answer.status, 400, body)
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  t.same(
    await gateway.app.store.collection(Collections.notifications).find({}).toArray(),
    [{ _id: PI, eventType: 'Created', processInstance: { processInstanceId: PI } }],
    'the record is unchanged and no other was made',
  )
})
