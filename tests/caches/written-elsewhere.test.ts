/**
 * The caches of what the gateway writes and every request reads (docs/reference/gateway.md#caches):
 * an engine that has cached a user or a tenant's webhook subscriptions sees a write made through
 * the gateway on the very next request.
 */
import t from 'tap'
import type { User } from '../../openapi/generated/schemas.js'
import { Collections } from '../../store/collections.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { HR, openForm, startLeaveRequest } from '../../services/testing/workflow.js'
import { startReceiver, startWebhookStack, subscribe } from '../webhooks/support.js'

function userInput(user: User, changes: Partial<User>): Record<string, unknown> {
  const { userId, fullName, unit, roles, swimlanes, organizationId, appId, isSystemUser } = { ...user, ...changes }
  return { userId, fullName, unit, roles, swimlanes, organizationId, appId, isSystemUser }
}

t.test('a user deleted through the gateway is refused by the engine on the next request, though it had cached the user', async (t) => {
  const { engine, gateway } = await startWebhookStack(t)
  const { employee } = engine.users
  t.equal((await startLeaveRequest(engine, employee)).status, 200, 'served, and the user is cached')
  const deleted = await gateway.call('deleteUser', 'DELETE', `/user/deleteUser?organizationId=${HR.organizationId}&appId=${HR.appId}`, {
    body: { id: employee.userId },
  })
  t.equal(deleted.status, 200)
  t.equal((await startLeaveRequest(engine, employee)).status, 401, 'the deleted user is unknown at once')
})

t.test("a swimlane member moved out through the gateway is gone from the next form's member list", async (t) => {
  const { engine, gateway } = await startWebhookStack(t)
  const { employee, manager } = engine.users
  const started = await startLeaveRequest(engine, employee)
  t.ok(started.body.formContext.swimlanes?.['manager']?.includes(manager.userId), 'the manager is listed, and the list cached')
  const stored = (await gateway.call<Envelope<User>>('getUserById', 'GET', `/user/getUserById/${manager.userId}`)).body.data
  const updated = await gateway.call('updateUser', 'POST', '/user/updateUser', { body: userInput(stored, { swimlanes: ['hr'] }) })
  t.equal(updated.status, 200)
  const second = await openForm(engine, employee, started.body)
  t.equal(second.status, 200)
  t.notOk(second.body.formContext.swimlanes?.['manager']?.includes(manager.userId), 'no longer in the manager swimlane')
  t.ok(second.body.formContext.swimlanes?.['hr']?.includes(manager.userId), 'now in the hr swimlane')
})

t.test(
  'a subscription created or deleted through the gateway decides the very next change, though the engine had cached none',
  async (t) => {
    const { engine, gateway } = await startWebhookStack(t)
    const { employee } = engine.users
    const deliveries = engine.store.collection(Collections.webhookDeliveries)
    const instanceOf = (answer: Awaited<ReturnType<typeof startLeaveRequest>>): string =>
      answer.body.context.processInstance.processInstanceId
    const before = await startLeaveRequest(engine, employee)
    t.equal(await deliveries.countDocuments({ processInstanceId: instanceOf(before) }), 0, 'no subscription yet, and that is cached')

    const receiver = await startReceiver(t)
    const subscription = await subscribe(gateway, receiver.url)
    const during = await startLeaveRequest(engine, employee)
    t.equal(await deliveries.countDocuments({ processInstanceId: instanceOf(during) }), 1, 'the new subscription gets the next change')

    const removed = await gateway.call(
      'deleteSubscription',
      'DELETE',
      `/subscription/delete?organizationId=${HR.organizationId}&appId=${HR.appId}`,
      {
        body: { id: subscription.subscriptionId },
      },
    )
    t.equal(removed.status, 200)
    const after = await startLeaveRequest(engine, employee)
    t.equal(await deliveries.countDocuments({ processInstanceId: instanceOf(after) }), 0, 'the deleted one gets none')
  },
)
