import t from 'tap'
import type { CustomError, NotificationRecord, Session } from '../../../openapi/generated/schemas.js'
import { Collections, type StoredContext, type StoredNotification } from '../../../store/collections.js'
import { notificationRecordOf, storedActivityTypes } from '../../testing/instance-store.js'
import type { AtomicWrite, AtomicWriteResult, Document, Store } from '../../../store/port.js'
import { deployExample, dataCollectionName, setConstant } from '../../testing/models.js'
import { completeTask, formTask, HR, openForm, startHrEngine, startLeaveRequest, type HrEngine, taskIds } from '../../testing/workflow.js'

async function storedContext(engine: HrEngine, processInstanceId: string): Promise<StoredContext> {
  const stored = await engine.store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
  if (!stored) throw new Error(`no context ${processInstanceId}`)
  return stored
}

async function notificationOf(engine: HrEngine, processInstanceId: string): Promise<StoredNotification | null> {
  return notificationRecordOf(engine.store, processInstanceId)
}

async function activityTypes(engine: HrEngine, processInstanceId: string): Promise<string[]> {
  return storedActivityTypes(engine.store, processInstanceId)
}

/** A leave request submitted by the employee, waiting for a manager. */
async function submittedLeave(engine: HrEngine, days = 3) {
  const started = await startLeaveRequest(engine, engine.users.employee, { days, reason: 'Family visit' })
  const submitted = await completeTask(engine, engine.users.employee, started.body, { dataInstance: { days, reason: 'Family visit' } })
  return { started: started.body, submitted: submitted.body }
}

t.test('a leave request runs start to end: submit, approve, book, payroll and team in parallel, finished', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager } = engine.users
  const started = await startLeaveRequest(engine, employee, { days: 3, reason: 'Family visit' })
  t.equal(started.status, 200)
  const request = formTask(started.body)
  t.match(request, { stepId: 'request', status: 'open', userId: employee.userId, swimlane: 'employee' })

  const submitted = await completeTask(engine, employee, started.body, {
    dataInstance: { days: 3, reason: 'Family visit' },
    additionalInfo: { activityDescription: 'Please approve' },
  })
  t.equal(submitted.status, 200)
  const approve = formTask(submitted.body)
  t.match(approve, { stepId: 'approve', status: 'open', swimlane: 'manager' })
  t.equal(submitted.body.formContext.readOnly, true, 'the employee may not approve')
  const afterSubmit = submitted.body.context.processInstance
  t.match(
    afterSubmit.tasks.find((task) => task.taskId === request.taskId),
    { status: 'completed', completedBy: employee.userId, actionType: 'complete' },
  )
  t.match(afterSubmit.notes, [{ note: 'Please approve', userId: employee.userId }], 'activityDescription became a note')
  t.ok(afterSubmit.contributorUsers.includes(employee.userId))
  t.equal(submitted.body.context.dataInstance.lastAction, 'complete', 'userTaskActivity ran after the completion')
  t.equal((await notificationOf(engine, afterSubmit.processInstanceId))?.eventType, 'TaskCompleted')

  const opened = await openForm(engine, manager, submitted.body)
  t.equal(opened.body.formContext.readOnly, false)
  const approved = await completeTask(engine, manager, opened.body)
  t.equal(approved.status, 200)
  const finished = approved.body.context
  t.equal(finished.processInstance.processStatus, 'completed')
  t.match(finished.dataInstance, { days: 3, booked: true, bookedBy: manager.userId, payrollUpdated: true, teamInformed: true })
  t.same(approved.body.formContext, {}, 'no task is left to open')
  const notification = await notificationOf(engine, finished.processInstance.processInstanceId)
  t.match(notification, {
    eventType: 'Finished',
    onUs: false,
    informList: [
      { key: 'days', header: '3 days' },
      { key: 'status', header: 'completed' },
    ],
  })
  t.notOk(notification?.task)
  const bookings = await engine.store
    .collection(dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings'))
    .find({})
    .toArray()
  t.match(bookings, [{ businessKey: finished.processInstance.businessKey, days: 3, employee: employee.userId }])
  t.same(await activityTypes(engine, finished.processInstance.processInstanceId), ['start', 'complete', 'display', 'complete'])
})

t.test('two concurrent completions of one task: exactly one succeeds, the other is 409 and its update is not stored', async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  for (let round = 0; round < 8; round++) {
    const started = (await startLeaveRequest(engine, employee)).body
    const answers = await Promise.all([
      completeTask(engine, employee, started, { dataInstance: { days: 4 } }),
      completeTask(engine, employee, started, { dataInstance: { days: 5 } }),
    ])
    const statuses = answers.map((answer) => answer.status).sort()
    t.same(statuses, [200, 409], `round ${round}: one 200, one 409`)
    const winner = answers.find((answer) => answer.status === 200)?.body as Session
    const loser = answers.find((answer) => answer.status === 409)?.body as unknown as CustomError
    t.ok(['wm3042', 'wm3041'].includes(loser.code), `the loser learns the task changed under it (${loser.code})`)
    const stored = await storedContext(engine, started.context.processInstance.processInstanceId)
    t.equal(stored.dataInstance.days, winner.context.dataInstance.days, "the stored data is the winner's")
    t.equal(stored.version, 2, 'one write after the start')
    t.equal(stored.processInstance.tasks.filter((task) => task.stepId === 'approve').length, 1, 'the process advanced once')
  }
})

t.test("locks: another user's lock is 409 wm3040, a task that is not open 409 wm3041, the lock is released on completion", async (t) => {
  const engine = await startHrEngine(t)
  const { manager, admin, employee } = engine.users
  const { submitted } = await submittedLeave(engine)
  const approve = formTask(submitted)
  const managerView = await openForm(engine, manager, submitted)
  t.equal(managerView.body.formContext.readOnly, false)
  const adminView = await openForm(engine, admin, submitted)
  t.match(adminView.body.formContext, { readOnly: true, lockedBy: manager.userId }, 'the admin may act but the manager holds the lock')
  const refused = await completeTask(engine, admin, submitted)
  t.equal(refused.status, 409)
  t.match(refused.body, { code: 'wm3040' })
  const saveRefused = await engine.call('saveAction', 'POST', '/action/save', {
    user: admin.userId,
    body: {
      ...HR,
      processId: 'leave-request',
      processInstanceId: submitted.context.processInstance.processInstanceId,
      businessKey: submitted.context.processInstance.businessKey,
      taskId: approve.taskId,
      dataInstance: {},
    },
  })
  t.match(saveRefused, { status: 409, body: { code: 'wm3040' } })
  t.equal((await completeTask(engine, manager, submitted)).status, 200)
  t.equal(await engine.store.collection(Collections.taskLocks).findOne({ _id: approve.taskId }), null, 'released on completion')
  const again = await completeTask(engine, manager, submitted)
  t.match(again, { status: 409, body: { code: 'wm3041' } })
  const request = submitted.context.processInstance.tasks.find((task) => task.stepId === 'request')
  t.match(await completeTask(engine, employee, submitted, { taskId: request?.taskId }), { status: 409, body: { code: 'wm3041' } })
})

t.test('who may act: 403 wm4030 for a user not on the task or not on the instance, 404 for another tenant', async (t) => {
  const engine = await startHrEngine(t)
  const { colleague, outsider, stranger, employee } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  t.match(
    await completeTask(engine, colleague, started),
    { status: 403, body: { code: 'wm4030' } },
    'a member of the lane, but the task is assigned to the employee',
  )
  t.match(await completeTask(engine, outsider, started), { status: 403, body: { code: 'wm4030' } })
  t.match(await completeTask(engine, stranger, started), { status: 404, body: { code: 'wm3001' } })
  t.match(await completeTask(engine, employee, started, { taskId: 'no-such-task' }), { status: 404, body: { code: 'wm3005' } })
  t.match(await completeTask(engine, employee, started, { actionType: 'function' }), { status: 400, body: { code: 'wm3110' } })
  t.match(
    await completeTask(engine, employee, started, { actionType: 'return' }),
    { status: 400, body: { code: 'wm3110' } },
    'the request step offers no return',
  )
  t.equal((await storedContext(engine, started.context.processInstance.processInstanceId)).version, 1, 'refusals change nothing')
})

t.test('a failing rollback step undoes the whole request: 500 wm3050, stored state exactly as before', async (t) => {
  const engine = await startHrEngine(t)
  const { manager } = engine.users
  const { submitted } = await submittedLeave(engine)
  const instance = submitted.context.processInstance
  // The booking step inserts into a collection whose businessKey is unique: make that insert fail.
  await engine.store
    .collection(dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings'))
    .insertOne({ businessKey: instance.businessKey, days: 1 })
  await openForm(engine, manager, submitted)
  const before = await storedContext(engine, instance.processInstanceId)
  const notificationBefore = await notificationOf(engine, instance.processInstanceId)
  const activitiesBefore = await activityTypes(engine, instance.processInstanceId)
  const failed = await completeTask(engine, manager, submitted)
  t.equal(failed.status, 500)
  t.match(failed.body, { code: 'wm3050', statusCode: 500, type: 'technical' })
  t.same(await storedContext(engine, instance.processInstanceId), before, 'the context is untouched')
  t.same(await notificationOf(engine, instance.processInstanceId), notificationBefore, 'no notification')
  t.same(await activityTypes(engine, instance.processInstanceId), activitiesBefore, 'no activity')
  t.equal(
    (await engine.store.collection(Collections.taskLocks).findOne({ _id: formTask(submitted).taskId }))?.userId,
    manager.userId,
    'the lock stays where it was',
  )
})

/**
 * The store as the engine sees it, where the first batch that inserts into `collection` after
 * `rival.doc` is set finds that document stored first: another request's commit, landing after
 * this run checked the unique key and before its own commit.
 */
function storeWithRival(store: Store, collection: string, rival: { doc?: Document }): Store {
  const applyAtomically = async (writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]> => {
    const doc = rival.doc
    if (doc && writes.some((write) => write.collection === collection && write.kind === 'insertOne')) {
      delete rival.doc
      await store.collection(collection).insertOne({ ...doc })
    }
    return store.applyAtomically(writes)
  }
  return new Proxy(store, {
    get(target, property) {
      if (property === 'applyAtomically') return applyAtomically
      const value: unknown = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

t.test('a booking that loses the race for its unique key: 409 wm3043, nothing stored; the retry answers as the model says', async (t) => {
  const bookings = dataCollectionName({ organizationId: 'acme', appId: 'hr' }, 'leave-bookings')
  const rival: { doc?: Document } = {}
  const engine = await startHrEngine(t, {}, { storeSeenByEngine: (store) => storeWithRival(store, bookings, rival) })
  const { manager } = engine.users
  const { submitted } = await submittedLeave(engine)
  const instance = submitted.context.processInstance
  await openForm(engine, manager, submitted)
  const before = await storedContext(engine, instance.processInstanceId)
  const notificationBefore = await notificationOf(engine, instance.processInstanceId)
  const activitiesBefore = await activityTypes(engine, instance.processInstanceId)

  rival.doc = { businessKey: instance.businessKey, days: 1 }
  const lost = await completeTask(engine, manager, submitted)
  t.equal(lost.status, 409)
  t.match(lost.body, { code: 'wm3043', statusCode: 409, type: 'technical', parameters: { collection: 'leave-bookings' } })
  t.notOk(rival.doc, 'the rival was stored in between')
  t.same(await storedContext(engine, instance.processInstanceId), before, 'the context is untouched')
  t.same(await notificationOf(engine, instance.processInstanceId), notificationBefore, 'no notification')
  t.same(await activityTypes(engine, instance.processInstanceId), activitiesBefore, 'no activity')
  const stored = await engine.store.collection(bookings).find({}).toArray()
  t.same(
    stored.map((booking) => booking.days),
    [1],
    "only the rival's booking",
  )

  // Retried, the run sees the rival's booking: the booking step's insert fails, and that step rolls back.
  const retried = await completeTask(engine, manager, submitted)
  t.equal(retried.status, 500)
  t.match(retried.body, { code: 'wm3050' })
})

t.test('a failing onError-fail step fails its thread and the process; /action/retry re-runs it and continues', async (t) => {
  const engine = await startHrEngine(t)
  const { manager } = engine.users
  await setConstant(engine.store, HR, 'payrollOnline', 'no')
  const { submitted } = await submittedLeave(engine)
  const approved = await completeTask(engine, manager, (await openForm(engine, manager, submitted)).body)
  t.equal(approved.status, 200, "the failure is the process's, not the request's")
  const instance = approved.body.context.processInstance
  t.equal(instance.processStatus, 'failed')
  const failedThread = instance.threads.find((thread) => thread.status === 'failed')
  t.match(failedThread, { stepId: 'updatePayroll', error: { message: 'Payroll system is offline', code: 'PAYROLL_OFFLINE' } })
  t.equal((await notificationOf(engine, instance.processInstanceId))?.eventType, 'Failed')

  const retryBody = { ...HR, processInstanceId: instance.processInstanceId, threadId: failedThread?.threadId }
  const stillOffline = await engine.call<Session>('retryAction', 'POST', '/action/retry', { user: manager.userId, body: retryBody })
  t.equal(stillOffline.body.context.processInstance.processStatus, 'failed', 'a retry that fails again leaves it failed')
  await setConstant(engine.store, HR, 'payrollOnline', 'yes')
  const retried = await engine.call<Session>('retryAction', 'POST', '/action/retry', { user: manager.userId, body: retryBody })
  t.equal(retried.status, 200)
  t.equal(retried.body.context.processInstance.processStatus, 'completed')
  t.equal(retried.body.context.dataInstance.payrollUpdated, true)
  t.equal((await notificationOf(engine, instance.processInstanceId))?.eventType, 'Finished')
  const again = await engine.call('retryAction', 'POST', '/action/retry', { user: manager.userId, body: retryBody })
  t.match(again, { status: 404, body: { code: 'wm3080' } }, 'the thread is no longer failed')
  t.match(
    await engine.call('retryAction', 'POST', '/action/retry', { user: manager.userId, body: { ...retryBody, processInstanceId: 'nope' } }),
    { status: 404, body: { code: 'wm3001' } },
  )
  t.match(
    await engine.call('retryAction', 'POST', '/action/retry', {
      user: manager.userId,
      body: { processInstanceId: instance.processInstanceId },
    }),
    { status: 400, body: { code: 'wm4000', parameters: { field: 'body.threadId' } } },
  )
})

t.test('save persists the form data, logs a save, runs userTaskActivity and sends Updated; the lock is unchanged', async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const instance = started.context.processInstance
  const task = formTask(started)
  const saved = await engine.call<Session>('saveAction', 'POST', '/action/save', {
    user: employee.userId,
    body: { ...HR, ...taskIds(started, task.taskId), dataInstance: { days: 7, reason: 'Trip' } },
  })
  t.equal(saved.status, 200)
  t.match(saved.body.context.dataInstance, { days: 7, reason: 'Trip', lastAction: 'save' })
  t.match(saved.body.formContext, { task: { taskId: task.taskId, status: 'open' }, readOnly: false })
  t.match((await storedContext(engine, instance.processInstanceId)).dataInstance, { days: 7, reason: 'Trip' })
  t.equal((await notificationOf(engine, instance.processInstanceId))?.eventType, 'Updated')
  t.same(await activityTypes(engine, instance.processInstanceId), ['start', 'save'])
  t.equal(
    (await engine.store.collection(Collections.taskLocks).findOne({ _id: task.taskId }))?.userId,
    employee.userId,
    "still the employee's",
  )
})

t.test("a function action runs on the request's form data and answers its infoList; its documented 401 and 500 statuses", async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const instance = started.context.processInstance
  const body = { ...HR, ...taskIds(started), customType: 'checkBalance', dataInstance: { days: 25 } }
  const ran = await engine.call<Session>('runActionFunction', 'POST', '/action/function', { user: employee.userId, body })
  t.equal(ran.status, 200)
  t.same(ran.body.context.infoList, ['Not enough leave days'])
  t.match(ran.body.formContext, { task: { status: 'open' } }, 'the task stays open')
  t.equal((await notificationOf(engine, instance.processInstanceId))?.eventType, 'Updated')
  t.same(await activityTypes(engine, instance.processInstanceId), ['start', 'function'])

  t.match(
    await engine.call('runActionFunction', 'POST', '/action/function', {
      user: employee.userId,
      body: { ...body, customType: 'noSuchAction' },
    }),
    { status: 401, body: { code: 'wm3051' } },
  )
  const { taskId: _taskId, ...withoutTask } = body
  t.match(await engine.call('runActionFunction', 'POST', '/action/function', { user: employee.userId, body: withoutTask }), {
    status: 500,
    body: { code: 'wm3060', parameters: { field: 'body.taskId' } },
  })
  const { processInstanceId: _id, ...withoutInstance } = body
  t.match(await engine.call('runActionFunction', 'POST', '/action/function', { user: employee.userId, body: withoutInstance }), {
    status: 500,
    body: { code: 'wm3060' },
  })
})

t.test('a running instance keeps the model version it started with; new instances take the latest live one', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager } = engine.users
  const { submitted } = await submittedLeave(engine)
  await deployExample(engine.store, 'leave-request', {
    ...HR,
    edit: (body) => {
      const steps = body.steps as Record<string, { name?: string }>
      ;(steps.request as { name: string }).name = 'Request leave (v2)'
    },
  })
  const returned = await completeTask(engine, manager, (await openForm(engine, manager, submitted)).body, { actionType: 'return' })
  t.equal(returned.status, 200)
  t.equal(returned.body.context.processInstance.modelVersion, 1)
  t.match(formTask(returned.body), { stepId: 'request', name: 'Request leave' }, 'the returned task comes from version 1')
  const fresh = await startLeaveRequest(engine, employee)
  t.equal(fresh.body.context.processInstance.modelVersion, 2)
  t.equal(formTask(fresh.body).name, 'Request leave (v2)')
})

t.test("the purchase example runs start to end: parallel finance and legal approvals, then the app library's vatOf", async (t) => {
  const engine = await startHrEngine(t)
  const { employee, finance, legal } = engine.users
  const started = await engine.call<Session>('openContext', 'POST', '/context', {
    user: employee.userId,
    body: { ...HR, processId: 'purchase', input: { item: 'Laptop', amount: 1200 } },
  })
  t.equal(started.status, 200)
  const submitted = await completeTask(engine, employee, started.body, { dataInstance: { item: 'Laptop', amount: 1200 } })
  const open = submitted.body.context.processInstance.tasks.filter((task) => task.status === 'open')
  t.same(open.map((task) => task.stepId).sort(), ['finance', 'legal'])
  const financeTask = open.find((task) => task.stepId === 'finance')
  const legalTask = open.find((task) => task.stepId === 'legal')
  const afterFinance = await completeTask(engine, finance, submitted.body, { taskId: financeTask?.taskId })
  t.equal(afterFinance.body.context.processInstance.processStatus, 'running', 'the join waits for legal')
  const done = await completeTask(engine, legal, afterFinance.body, { taskId: legalTask?.taskId })
  t.equal(done.status, 200)
  t.equal(done.body.context.processInstance.processStatus, 'completed')
  const notification = (await notificationOf(engine, done.body.context.processInstance.processInstanceId)) as NotificationRecord | null
  t.match(notification, { eventType: 'Finished', informList: [{ key: 'item', header: 'Laptop' }] })
})
