import t from 'tap'
import type { Session } from '../../../../openapi/generated/schemas.js'
import { Collections, type StoredWebhookDelivery, type StoredWebhookSubscription } from '../../../../store/collections.js'
import { dataCollectionName } from '../../../testing/models.js'
import { completeTask, HR, type HrEngine, openForm, startHrEngine, startLeaveRequest } from '../../../testing/workflow.js'

function subscription(id: string, fields: Partial<StoredWebhookSubscription>): StoredWebhookSubscription {
  return {
    _id: id,
    ...HR,
    url: 'http://127.0.0.1:1/hooks',
    events: ['Created', 'TaskCompleted', 'Finished'],
    processIds: [],
    secret: 's'.repeat(32),
    createdAt: new Date(),
    ...fields,
  }
}

async function deliveriesOf(engine: HrEngine, processInstanceId: string): Promise<StoredWebhookDelivery[]> {
  return engine.store
    .collection<StoredWebhookDelivery>(Collections.webhookDeliveries)
    .find({ processInstanceId }, { sort: { sequence: 1, subscriptionId: 1 } })
    .toArray()
}

t.test(
  'a change stores one delivery per subscription of its tenant whose events and processIds match, with the instance version as its order',
  async (t) => {
    const engine = await startHrEngine(t)
    await engine.store
      .collection(Collections.webhookSubscriptions)
      .insertMany([
        { ...subscription('all', {}) },
        { ...subscription('completions', { events: ['TaskCompleted'] }) },
        { ...subscription('leave', { processIds: ['leave-request', 'purchase'] }) },
        { ...subscription('purchases', { processIds: ['purchase'] }) },
        { ...subscription('sales', { appId: 'sales' }) },
        { ...subscription('other-org', { organizationId: 'globex' }) },
      ])
    const started = await startLeaveRequest(engine, engine.users.employee)
    const instance = started.body.context.processInstance
    await completeTask(engine, engine.users.employee, started.body)
    const stored = await deliveriesOf(engine, instance.processInstanceId)
    t.same(
      stored.map((entry) => `${entry.sequence} ${entry.eventType} ${entry.subscriptionId}`),
      ['1 Created all', '1 Created leave', '2 TaskCompleted all', '2 TaskCompleted completions', '2 TaskCompleted leave'],
    )
    const created = stored[0]!
    t.match(created, { ...HR, processId: 'leave-request', orderKey: `all ${instance.processInstanceId}` })
    t.match(JSON.parse(created.body), {
      deliveryId: created._id,
      eventType: 'Created',
      ...HR,
      processId: 'leave-request',
      processInstance: { processInstanceId: instance.processInstanceId },
      task: { stepId: 'request' },
    })
    t.equal(JSON.parse(created.body).occurredAt, created.createdAt.toISOString(), 'occurredAt is the time of the change')
  },
)

t.test('a request that fails before its commit stores no delivery, like it stores nothing else', async (t) => {
  const engine = await startHrEngine(t)
  await engine.store.collection(Collections.webhookSubscriptions).insertOne({ ...subscription('all', {}) })
  const { employee, manager } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const submitted = (await completeTask(engine, employee, started)).body as Session
  const instance = submitted.context.processInstance
  // The booking step inserts into a collection whose businessKey is unique: make that insert fail.
  await engine.store
    .collection(dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings'))
    .insertOne({ businessKey: instance.businessKey, days: 1 })
  const before = (await deliveriesOf(engine, instance.processInstanceId)).map((entry) => entry._id)
  const failed = await completeTask(engine, manager, (await openForm(engine, manager, submitted)).body)
  t.equal(failed.status, 500)
  t.same(
    (await deliveriesOf(engine, instance.processInstanceId)).map((entry) => entry._id),
    before,
    'no delivery of the failed request',
  )
})
