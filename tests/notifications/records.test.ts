/**
 * Notification records through the gateway (docs/reference/events.md#how-a-record-is-stored): an
 * instance's record is the view of its latest change; one upserted (`POST /notify`) or resent
 * (`POST /notify/send`) since then is the record until the instance changes again.
 */
import t from 'tap'
import type { NotificationRecord, Session } from '../../openapi/generated/schemas.js'
import { notificationRecordOf } from '../../services/testing/instance-store.js'
import { HR } from '../../services/testing/workflow.js'
import { Collections } from '../../store/collections.js'
import { startControlStack } from '../process-control/stack.js'

t.test('a record upserted over an instance keeps what it read until the instance changes; listing shows each instance once', async (t) => {
  const stack = await startControlStack(t)
  const { admin, employee } = stack.users
  const session = await stack.startLeave()
  const { processInstanceId, businessKey } = session.context.processInstance
  const list = async () => {
    const answer = await stack.send<NotificationRecord[]>('listNotifications', 'GET', '/notifications/hr', { as: admin })
    t.equal(answer.status, 200)
    return answer.body.data.filter((record) => record.processInstance.processInstanceId === processInstanceId)
  }
  t.match(await list(), [{ eventType: 'Created', onUs: true, task: { stepId: 'request' }, informList: [{ header: '3 days' }] }])
  t.equal(await stack.store.collection(Collections.notifications).countDocuments({ _id: processInstanceId }), 0, 'a change stores no copy')

  const upserted = await stack.send('upsertNotification', 'POST', '/notify', {
    as: admin,
    body: { ...HR, notificationObject: { eventType: 'Assigned', processInstance: { processInstanceId, processName: 'Renamed' } } },
  })
  t.equal(upserted.status, 200)
  const [record] = await list()
  t.match(record, {
    eventType: 'Assigned',
    onUs: true,
    informList: [{ header: '3 days' }],
    processInstance: { processInstanceId, processName: 'Renamed', businessKey, processStatus: 'running' },
  })
  t.equal((await list()).length, 1, 'listed once, as upserted')
  t.notOk(record && 'basis' in record, 'without the version it was stored over')

  const submitted = await stack.send<Session>('completeAction', 'POST', '/action/complete', {
    as: employee,
    body: {
      ...HR,
      processId: 'leave-request',
      processInstanceId,
      businessKey,
      taskId: session.formContext.task?.taskId,
      actionType: 'complete',
      dataInstance: session.context.dataInstance,
    },
  })
  t.equal(submitted.status, 200)
  t.match(await list(), [{ eventType: 'TaskCompleted', task: { stepId: 'approve' }, processInstance: { processName: 'Leave request' } }])
  t.equal(await stack.store.collection(Collections.notifications).countDocuments({ _id: processInstanceId }), 0, 'the change removed it')

  const resent = await stack.send('sendNotification', 'POST', '/notify/send', {
    as: employee,
    body: { ...HR, processId: 'leave-request', processInstanceId, businessKey, eventType: 'Updated' },
  })
  t.equal(resent.status, 200)
  t.match(await notificationRecordOf(stack.store, processInstanceId), { eventType: 'Updated', task: { stepId: 'approve' } })
  t.match(await list(), [{ eventType: 'Updated' }])
})
