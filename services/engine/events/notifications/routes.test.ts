import t from 'tap'
import type { NotificationRecord } from '../../../../openapi/generated/schemas.js'
import { Collections, type StoredNotification } from '../../../../store/collections.js'
import { testClock } from '../../../testing/clock.js'
import { completeTask, HR, startHrEngine, startLeaveRequest } from '../../../testing/workflow.js'

t.test('GET /notifications/:appId lists what the user may see, newest change first, a page at a time', async (t) => {
  const clock = testClock('2026-01-05T08:00:00.000Z')
  const engine = await startHrEngine(t, {}, { clock: clock.now })
  const { employee, colleague, manager, admin } = engine.users
  const own = []
  // A second between changes on the engine's clock: no two share a `lastUpdate`, so the order is defined.
  for (let i = 0; i < 3; i++) {
    own.push((await startLeaveRequest(engine, employee, { days: i + 1 })).body)
    clock.advance(1_000)
  }
  const colleagues = (await startLeaveRequest(engine, colleague, { days: 9 })).body
  clock.advance(1_000)
  // The first request changes last, so it lists first.
  const submitted = (await completeTask(engine, employee, own[0]!)).body

  const list = (user: string, query = '') =>
    engine.call<NotificationRecord[]>('listNotifications', 'GET', `/notifications/hr${query}`, { user })
  const mine = await list(employee.userId)
  t.equal(mine.status, 200)
  const ownIds = own.map((session) => session.context.processInstance.processInstanceId)
  const colleaguesId = colleagues.context.processInstance.processInstanceId
  // A member of the swimlane of an open task sees it (docs/reference/identity.md#authorization-on-an-instance), so the colleague's request
  // (waiting in the employee lane) lists too; the manager's and other tenants' do not.
  t.same(
    mine.body.map((record) => record.processInstance.processInstanceId),
    [ownIds[0], colleaguesId, ownIds[2], ownIds[1]],
    'what the employee may see, newest change first',
  )
  t.match(mine.body[0], { eventType: 'TaskCompleted', onUs: true, task: { stepId: 'approve' } })
  const lastUpdates = mine.body.map((record) => record.processInstance.lastUpdate ?? '')
  t.same(
    lastUpdates,
    ['2026-01-05T08:00:04.000Z', '2026-01-05T08:00:03.000Z', '2026-01-05T08:00:02.000Z', '2026-01-05T08:00:01.000Z'],
    "each record's lastUpdate is the engine's time of its change",
  )

  const managerView = await list(manager.userId)
  t.same(
    managerView.body.map((record) => record.processInstance.processInstanceId),
    [submitted.context.processInstance.processInstanceId],
    'the manager sees the request waiting in his lane',
  )
  t.equal((await list(admin.userId)).body.length, 4, "the admin sees the app's every instance")
  t.ok(
    (await list(colleague.userId)).body.some(
      (record) => record.processInstance.processInstanceId === colleagues.context.processInstance.processInstanceId,
    ),
  )

  const first = await list(employee.userId, '?limit=2')
  t.equal(first.body.length, 2)
  const cursor = first.headers.get('x-next-cursor')
  t.ok(cursor, 'a cursor when more follow')
  const second = await list(employee.userId, `?limit=2&cursor=${cursor}`)
  t.same(
    second.body.map((record) => record.processInstance.processInstanceId),
    [ownIds[2], ownIds[1]],
  )
  t.equal(second.headers.get('x-next-cursor'), null, 'no cursor on the last page')
  t.match(await list(employee.userId, '?cursor=bogus'), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'querystring.cursor' } },
  })
  t.match(await list(employee.userId, '?limit=0'), { status: 400, body: { code: 'wm4000' } })
  t.same((await list(engine.users.stranger.userId)).body, [], "another tenant's app lists nothing")
  t.match(await engine.call('listNotifications', 'GET', '/notifications/hr'), { status: 401, body: { code: 'wm4010' } })
})

t.test('POST /notify/send rewrites the record from the current context with the given event; 404 C-3003 without one', async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  const started = (await startLeaveRequest(engine, employee, { days: 4 })).body
  const { processInstanceId, businessKey } = started.context.processInstance
  const notifications = engine.store.collection<StoredNotification>(Collections.notifications)
  await notifications.deleteOne({ _id: processInstanceId })
  const sent = await engine.call('sendNotification', 'POST', '/notify/send', {
    user: employee.userId,
    body: { ...HR, processId: 'leave-request', businessKey, eventType: 'Updated' },
  })
  t.match(sent, { status: 200, body: { status: 'OK' } })
  t.match(await notifications.findOne({ _id: processInstanceId }), {
    eventType: 'Updated',
    onUs: true,
    informList: [{ header: '4 days' }],
    processInstance: { processInstanceId },
  })
  const byId = await engine.call('sendNotification', 'POST', '/notify/send', {
    user: employee.userId,
    body: { ...HR, processId: 'leave-request', businessKey, processInstanceId, eventType: 'Assigned' },
  })
  t.equal(byId.status, 200)
  t.equal((await notifications.findOne({ _id: processInstanceId }))?.eventType, 'Assigned')
  t.match(
    await engine.call('sendNotification', 'POST', '/notify/send', {
      user: employee.userId,
      body: { ...HR, processId: 'leave-request', businessKey: 'LR-none', eventType: 'Updated' },
    }),
    { status: 404, body: { code: 'C-3003' } },
  )
  t.match(
    await engine.call('sendNotification', 'POST', '/notify/send', {
      user: employee.userId,
      body: { appId: 'sales', processId: 'leave-request', businessKey, eventType: 'Updated' },
    }),
    { status: 404, body: { code: 'C-3003' } },
    'another app has no such context',
  )
  t.match(
    await engine.call('sendNotification', 'POST', '/notify/send', {
      user: employee.userId,
      body: { ...HR, businessKey, eventType: 'Updated' },
    }),
    { status: 400, body: { code: 'wm4000', parameters: { field: 'body.processId' } } },
  )
  t.match(
    await engine.call('sendNotification', 'POST', '/notify/send', {
      user: engine.users.outsider.userId,
      body: { ...HR, processId: 'leave-request', businessKey, eventType: 'Finished' },
    }),
    { status: 403, body: { code: 'wm4030' } },
    'a user not authorized on the instance',
  )
  t.match(
    await engine.call('sendNotification', 'POST', '/notify/send', {
      body: { ...HR, processId: 'leave-request', businessKey, eventType: 'Finished' },
    }),
    { status: 401, body: { code: 'wm4010' } },
    'nobody',
  )
  t.equal((await notifications.findOne({ _id: processInstanceId }))?.eventType, 'Assigned', 'neither changed the record')
})
