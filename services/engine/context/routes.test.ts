import t from 'tap'
import type { ActivityRecord, Session } from '../../../openapi/generated/schemas.js'
import { Collections } from '../../../store/collections.js'
import { notificationRecordOf } from '../../testing/instance-store.js'
import { deployExample } from '../../testing/models.js'
import { completeTask, formTask, HR, openForm, startHrEngine, startLeaveRequest } from '../../testing/workflow.js'

t.test('POST /context without an instance starts one: the session, the first task locked for the initiator, Created', async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  const answer = await startLeaveRequest(engine, employee, { days: 3, reason: 'Family visit' })
  t.equal(answer.status, 200)
  const { context, formContext, swimlanes } = answer.body
  t.match(context.processInstance, {
    processId: 'leave-request',
    processName: 'Leave request',
    businessKey: /^LR-[0-9a-f]{8}$/,
    appId: 'hr',
    organizationId: 'acme',
    modelVersion: 1,
    processStatus: 'running',
    initiator: employee.userId,
  })
  t.same(context.dataInstance, { days: 3, reason: 'Family visit' })
  t.ok(context.processInstance.contributorUsers.includes(employee.userId), 'the assignee of the first task is a contributor')
  t.match(formContext, {
    task: { stepId: 'request', userId: employee.userId },
    readOnly: false,
    form: 'leave-form',
    preForms: ['leave-intro'],
    actions: [{ actionType: 'complete' }, { actionType: 'cancel' }, { actionType: 'function', customType: 'checkBalance' }],
  })
  t.same(formContext.swimlanes?.employee?.sort(), [employee.userId, engine.users.colleague.userId].sort(), 'who works in which swimlane')
  t.same(formContext.swimlanes?.manager, [engine.users.manager.userId])
  t.same(swimlanes?.manager, { name: 'Managers', description: 'Approve or return leave requests' })
  const processInstanceId = context.processInstance.processInstanceId
  t.match(await engine.store.collection(Collections.taskLocks).findOne({ _id: formTask(answer.body).taskId }), {
    userId: employee.userId,
    processInstanceId,
  })
  const notification = await notificationRecordOf(engine.store, processInstanceId)
  t.match(notification, {
    eventType: 'Created',
    appId: 'hr',
    onUs: true,
    task: { stepId: 'request' },
    informList: [
      { key: 'days', label: 'Days', header: '3 days', display: true },
      { key: 'status', header: 'running' },
    ],
  })
})

t.test(
  'POST /context start: the appId is resolved from the processId, else 400 wm3003; bad input 400 wm3004 and nothing stored',
  async (t) => {
    const engine = await startHrEngine(t)
    const { employee } = engine.users
    const resolved = await engine.call<Session>('openContext', 'POST', '/context', {
      user: employee.userId,
      body: { processId: 'leave-request', input: { days: 2 } },
    })
    t.equal(resolved.status, 200)
    t.equal(resolved.body.context.processInstance.appId, 'hr')
    const unknown = await engine.call('openContext', 'POST', '/context', {
      user: employee.userId,
      body: { processId: 'no-such-process', input: {} },
    })
    t.match(unknown, { status: 400, body: { code: 'wm3003' } })
    await deployExample(engine.store, 'leave-request', { appId: 'hr-copy', organizationId: 'acme' })
    const ambiguous = await engine.call('openContext', 'POST', '/context', {
      user: employee.userId,
      body: { processId: 'leave-request', input: { days: 2 } },
    })
    t.match(ambiguous, { status: 400, body: { code: 'wm3003', message: /several apps/ } })

    const count = await engine.store.collection(Collections.contexts).countDocuments()
    for (const input of [{}, { days: 0 }, { days: 3, extra: true }, { days: 'three' }]) {
      const invalid = await engine.call('openContext', 'POST', '/context', {
        user: employee.userId,
        body: { ...HR, processId: 'leave-request', input },
      })
      t.match(invalid, { status: 400, body: { code: 'wm3004' } }, JSON.stringify(input))
    }
    t.match(await engine.call('openContext', 'POST', '/context', { user: employee.userId, body: { ...HR, input: { days: 1 } } }), {
      status: 400,
      body: { code: 'wm4000', parameters: { field: 'body.processId' } },
    })
    t.match(
      await engine.call('openContext', 'POST', '/context', { user: employee.userId, body: { ...HR, processId: 'nope', input: {} } }),
      { status: 404, body: { code: 'wm3002' } },
    )
    t.match(
      await engine.call('openContext', 'POST', '/context', {
        user: engine.users.stranger.userId,
        body: { ...HR, processId: 'leave-request', input: { days: 1 } },
      }),
      { status: 404, body: { code: 'wm3002' } },
      "another tenant's model is invisible",
    )
    t.match(await engine.call('openContext', 'POST', '/context', { body: { ...HR, processId: 'leave-request', input: { days: 1 } } }), {
      status: 401,
      body: { code: 'wm4010' },
    })
    t.equal(await engine.store.collection(Collections.contexts).countDocuments(), count, 'no refused start stored anything')
  },
)

t.test('POST /context on an instance: display logged; skipToForm takes the lock, a second user reads it locked', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager, admin } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const submitted = (await completeTask(engine, employee, started)).body
  const instance = submitted.context.processInstance

  const preview = await engine.call<Session>('openContext', 'POST', '/context', {
    user: manager.userId,
    body: { ...HR, processId: 'leave-request', processInstanceId: instance.processInstanceId, actionType: 'complete' },
  })
  t.equal(preview.status, 200)
  t.match(preview.body.formContext, { task: { stepId: 'approve' }, readOnly: false, form: 'leave-form' })
  t.match(preview.body.context.action, { actionType: 'complete' })
  t.equal(
    await engine.store.collection(Collections.taskLocks).findOne({ _id: formTask(preview.body).taskId }),
    null,
    'without skipToForm no lock is taken',
  )

  const opened = await openForm(engine, manager, submitted)
  t.match(opened.body.formContext, { task: { stepId: 'approve' }, readOnly: false })
  t.notOk(opened.body.formContext.preForms, 'pre-forms skipped')
  const second = await openForm(engine, admin, submitted)
  t.match(second.body.formContext, { readOnly: true, lockedBy: manager.userId })
  const byInitiator = await openForm(engine, employee, submitted)
  t.match(
    byInitiator.body.formContext,
    { task: { stepId: 'approve' }, readOnly: true },
    'the employee may see the approval but not act on it',
  )
  t.equal(byInitiator.body.formContext.lockedBy, manager.userId)

  const activity = await engine.call<ActivityRecord[]>('listContextActivity', 'POST', '/context/activity', {
    user: employee.userId,
    body: { ...HR, processInstanceId: instance.processInstanceId },
  })
  t.equal(activity.status, 200)
  t.same(
    activity.body.map((record) => record.type),
    ['display', 'display', 'display', 'display', 'complete', 'start'],
    'newest first',
  )
  t.match(activity.body[0], {
    userId: employee.userId,
    userName: 'Eve Employee',
    taskId: formTask(submitted).taskId,
    stepId: 'approve',
    details: { skipToForm: true },
  })
  for (let i = 1; i < activity.body.length; i++)
    t.ok((activity.body[i - 1]?.timeStamp ?? '') >= (activity.body[i]?.timeStamp ?? ''), 'timeStamps descend')
})

t.test("POST /context on an instance: 404 unknown or another tenant's, 403 not authorized, 404 wm3005 unknown task", async (t) => {
  const engine = await startHrEngine(t)
  const { employee, outsider, stranger, colleague } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const open = (user: string, extra: Record<string, unknown> = {}) =>
    engine.call('openContext', 'POST', '/context', {
      user,
      body: { ...HR, processId: 'leave-request', processInstanceId: started.context.processInstance.processInstanceId, ...extra },
    })
  t.match(await open(outsider.userId), { status: 403, body: { code: 'wm4030' } })
  t.match(await open(stranger.userId), { status: 404, body: { code: 'wm3001' } })
  t.match(await open(employee.userId, { processInstanceId: 'no-such-instance' }), { status: 404, body: { code: 'wm3001' } })
  t.match(await open(employee.userId, { taskId: 'no-such-task' }), { status: 404, body: { code: 'wm3005' } })
  t.match(
    await open(colleague.userId, { skipToForm: 'true' }),
    { status: 200, body: { formContext: { readOnly: true } } },
    "a lane member sees the employee's task but cannot take it",
  )
  t.match(
    await engine.call('listContextActivity', 'POST', '/context/activity', {
      user: outsider.userId,
      body: { processInstanceId: started.context.processInstance.processInstanceId },
    }),
    { status: 403, body: { code: 'wm4030' } },
  )
})
