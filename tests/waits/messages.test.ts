import t, { type Test } from 'tap'
import { Collections, type StoredMessageSubscription } from '../../store/collections.js'
import { createTestUser } from '../../services/testing/users.js'
import { sampleValue, scrape } from '../observability/exposition.js'
import { HOUR, startWaitStack, type WaitStack } from './support.js'

/** Waits for the payment of its order (correlated on the order id), for a day at most. */
const ORDER = {
  input: { type: 'object', required: ['orderId'], properties: { orderId: { type: 'string' } } },
  businessKey: "'ORDER-' & input.orderId",
  start: 'paid',
  steps: {
    paid: {
      type: 'receive',
      message: 'paymentReceived',
      correlate: 'data.orderId',
      as: 'data.payment',
      next: 'ship',
      timeout: { after: 'P1D', next: 'expired' },
    },
    ship: {
      type: 'userTask',
      name: 'Ship',
      swimlane: 'manager',
      actions: [{ actionType: 'complete', next: 'done' }],
    },
    done: { type: 'end' },
    expired: { type: 'end', status: 'cancelled' },
  },
  swimlanes: { manager: { name: 'Managers' } },
}

/** Waits for `confirmed` on its businessKey (no `correlate`), merging at the root. */
const SIGNUP = {
  businessKey: 'input.email',
  start: 'confirm',
  steps: { confirm: { type: 'receive', message: 'confirmed', next: 'done' }, done: { type: 'end' } },
}

async function orderStack(t: Test, engines = 1): Promise<WaitStack> {
  const stack = await startWaitStack(t, { engines })
  await stack.deploy('order', ORDER)
  await stack.deploy('signup', SIGNUP)
  return stack
}

t.test(
  'a message reaches the one thread waiting for it: its variables at `as`, the thread goes on, the answer names the instance',
  async (t) => {
    const stack = await orderStack(t)
    const id = await stack.start('order', { orderId: 'A-1' })
    const other = await stack.start('order', { orderId: 'A-2' })
    t.match((await stack.context(id)).processInstance.threads, [
      { status: 'waiting', message: { messageName: 'paymentReceived', correlationKey: 'A-1' } },
    ])
    const answer = await stack.correlate({
      messageName: 'paymentReceived',
      correlationKey: 'A-1',
      variables: { amount: 120, currency: 'EUR' },
    })
    t.equal(answer.status, 200)
    t.same(answer.body.data, {
      delivered: true,
      processInstanceId: id,
      processId: 'order',
      businessKey: 'ORDER-A-1',
      threadId: answer.body.data.threadId,
      stepId: 'paid',
    })
    const stored = await stack.context(id)
    t.same(stored.dataInstance.payment, { amount: 120, currency: 'EUR' })
    t.match(stored.processInstance.tasks, [{ stepId: 'ship', status: 'open' }])
    t.match(await stack.activities(id, 'messageReceived'), [
      { userId: stack.users.system.userId, stepId: 'paid', details: { messageName: 'paymentReceived', correlationKey: 'A-1' } },
    ])
    t.same(
      (await stack.store.collection<StoredMessageSubscription>(Collections.messageSubscriptions).find({}).toArray()).map(
        (s) => s.processInstanceId,
      ),
      [other],
      'the subscription went with the delivery; the other order still waits',
    )
    const again = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'A-1' })
    t.match(again, { status: 404, body: { error: { code: 'wm3200' } } }, 'nobody waits any more: a message is not kept without ttl')
    t.match((await stack.context(id)).processInstance.tasks.length, 1, 'and nothing changed')
  },
)

t.test('the correlation key defaults to the businessKey and variables merge into the root', async (t) => {
  const stack = await orderStack(t)
  const id = await stack.start('signup', { email: 'eve@example.org' })
  const answer = await stack.correlate({ messageName: 'confirmed', correlationKey: 'eve@example.org', variables: { confirmedAt: 'today' } })
  t.equal(answer.status, 200)
  const stored = await stack.context(id)
  t.equal(stored.processStatus, 'completed')
  t.same(stored.dataInstance, { email: 'eve@example.org', confirmedAt: 'today' })
})

t.test('two threads waiting for the same message are 409 wm3201 unless processId tells them apart', async (t) => {
  const stack = await orderStack(t)
  await stack.deploy('order-copy', ORDER)
  const first = await stack.start('order', { orderId: 'B-1' })
  await stack.start('order-copy', { orderId: 'B-1' })
  const ambiguous = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'B-1' })
  t.match(ambiguous, { status: 409, body: { error: { code: 'wm3201' } } })
  t.same((await stack.context(first)).processInstance.threads[0]?.status, 'waiting', 'nothing delivered')
  const named = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'B-1', processId: 'order' })
  t.match(named, { status: 200, body: { data: { processInstanceId: first } } })
})

t.test('only system users and admins of the tenant correlate; another organization with the same appId reaches nothing', async (t) => {
  const stack = await orderStack(t)
  const id = await stack.start('order', { orderId: 'C-1' })
  const user = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'C-1' }, { user: stack.users.employee })
  t.match(user, { status: 403, body: { error: { code: 'wm4031' } } })
  const foreign = await createTestUser(stack.store, { appId: 'hr', organizationId: 'globex', fullName: 'Gus Globex', isSystemUser: true })
  const fromGlobex = await stack.client.call('correlateMessage', 'POST', '/message/correlate', {
    user: foreign.userId,
    body: { appId: 'hr', organizationId: 'globex', messageName: 'paymentReceived', correlationKey: 'C-1' },
  })
  t.match(fromGlobex, { status: 404, body: { error: { code: 'wm3200' } } }, "another organization's message finds no thread of acme")
  const naming = await stack.client.call('correlateMessage', 'POST', '/message/correlate', {
    user: foreign.userId,
    body: { appId: 'hr', organizationId: 'acme', messageName: 'paymentReceived', correlationKey: 'C-1' },
  })
  t.not(naming.status, 200, 'naming the other organization does not help')
  t.equal((await stack.context(id)).processInstance.threads[0]?.status, 'waiting')
  const admin = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'C-1' }, { user: stack.users.admin })
  t.equal(admin.status, 200, 'an admin of the tenant may')
})

t.test('a message with a ttl waits for the thread that arrives for it, within its ttl only', async (t) => {
  const stack = await orderStack(t)
  const early = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'D-1', variables: { amount: 5 }, ttl: 'PT2H' })
  t.same(early.body.data, { delivered: false, bufferedUntil: '2026-03-02T10:30:00.000Z' })
  const badTtl = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'D-1', ttl: 'P90D' })
  t.match(badTtl, { status: 400, body: { error: { code: 'wm3202' } } })
  const id = await stack.start('order', { orderId: 'D-1' })
  const stored = await stack.until(
    () => stack.context(id),
    (context) => context.processInstance.tasks.length === 1,
  )
  t.same(stored.dataInstance.payment, { amount: 5 }, 'the buffered message was delivered to the thread that arrived')
  t.match(await stack.activities(id, 'messageReceived'), [{ details: { buffered: true } }])
  const second = await stack.start('order', { orderId: 'D-1' })
  await stack.batchWorkerCaughtUp()
  t.equal((await stack.context(second)).processInstance.threads[0]?.status, 'waiting', 'a buffered message is taken once')

  await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'D-2', ttl: 'PT1H' })
  stack.clock.advance(2 * HOUR)
  const late = await stack.start('order', { orderId: 'D-2' })
  await stack.batchWorkerCaughtUp()
  t.equal((await stack.context(late)).processInstance.threads[0]?.status, 'waiting', 'an expired message is not delivered')
})

t.test('a receive step times out', async (t) => {
  const stack = await orderStack(t)
  const id = await stack.start('order', { orderId: 'E-1' })
  stack.clock.advance(24 * HOUR)
  const stored = await stack.until(
    () => stack.context(id),
    (context) => context.processStatus === 'cancelled',
  )
  t.equal(stored.processStatus, 'cancelled', 'went to timeout.next')
  t.match(await stack.activities(id, 'timerFired'), [{ stepId: 'paid', details: { timeout: true } }])
  const after = await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'E-1' })
  t.equal(after.status, 404, 'the subscription is gone with the timeout')
})

t.test('the idempotency-key header makes a correlate answer its first answer again', async (t) => {
  const stack = await orderStack(t)
  const id = await stack.start('order', { orderId: 'F-1' })
  const headers = { 'idempotency-key': 'pay-F-1' }
  const body = { messageName: 'paymentReceived', correlationKey: 'F-1', variables: { amount: 1 } }
  const first = await stack.correlate(body, { headers })
  const again = await stack.correlate(body, { headers })
  t.equal(first.status, 200)
  t.equal(again.status, 200)
  t.equal(again.headers.get('idempotent-replayed'), 'true')
  t.same(again.body, first.body)
  t.equal((await stack.activities(id, 'messageReceived')).length, 1, 'delivered once')
  const changed = await stack.correlate({ ...body, variables: { amount: 2 } }, { headers })
  t.match(changed, { status: 422, body: { error: { code: 'wm3142' } } })
})

t.test('two engines: concurrent correlates of the same message deliver it once', async (t) => {
  const stack = await orderStack(t, 2)
  const engines = stack.engines.map((engine) => engine.url)
  for (const round of [1, 2, 3]) {
    const id = await stack.start('order', { orderId: `G-${round}` })
    const body = JSON.stringify({ appId: 'hr', organizationId: 'acme', messageName: 'paymentReceived', correlationKey: `G-${round}` })
    const answers = await Promise.all(
      [...engines, ...engines].map((url) =>
        fetch(`${url}/message/correlate`, {
          method: 'POST',
          headers: { user: stack.users.system.userId, 'content-type': 'application/json' },
          body,
        }),
      ),
    )
    const statuses = answers.map((answer) => answer.status).sort()
    t.same(statuses, [200, 404, 404, 404], `round ${round}: one delivered, the others found nobody waiting`)
    t.equal((await stack.activities(id, 'messageReceived')).length, 1)
    t.equal((await stack.context(id)).processInstance.tasks.length, 1)
  }
})

t.test('the engine counts messages by outcome and the waits they ended', async (t) => {
  const stack = await orderStack(t)
  const id = await stack.start('order', { orderId: 'H-1' })
  t.equal((await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'H-1' })).status, 200)
  t.equal((await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'H-1' })).status, 404)
  t.equal((await stack.correlate({ messageName: 'paymentReceived', correlationKey: 'H-2', ttl: 'PT1M' })).status, 200)
  const samples = await scrape(stack.engines[0]!.url)
  t.equal(sampleValue(samples, 'workflow_messages_correlated_total', { outcome: 'delivered' }), 1)
  t.equal(sampleValue(samples, 'workflow_messages_correlated_total', { outcome: 'noThread' }), 1)
  t.equal(sampleValue(samples, 'workflow_messages_correlated_total', { outcome: 'buffered' }), 1)
  t.equal(sampleValue(samples, 'workflow_waits_ended_total', { process_id: 'order', event: 'messageReceived' }), 1)
  t.equal((await stack.context(id)).processInstance.tasks.length, 1)
})
