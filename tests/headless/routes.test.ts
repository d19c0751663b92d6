import t from 'tap'
import type { FunctionResult, Session } from '../../openapi/generated/schemas.js'
import { lockHolder, storedActivityTypes, storedInstance, notificationRecordOf } from '../../services/testing/instance-store.js'
import { deployExample } from '../../services/testing/models.js'
import { completeTask, formTask, HR, type HrEngine, startHrEngine, startLeaveRequest } from '../../services/testing/workflow.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

async function setUp(t: Tap): Promise<{ engine: HrEngine; session: Session; processInstanceId: string; taskId: string }> {
  const engine = await startHrEngine(t)
  const session = (await startLeaveRequest(engine, engine.users.employee)).body
  return { engine, session, processInstanceId: session.context.processInstance.processInstanceId, taskId: formTask(session).taskId }
}

t.test('headless complete: data taken, task ended, userTaskActivity run, TaskCompleted sent, the stale lock released', async (t) => {
  const { engine, processInstanceId, taskId } = await setUp(t)
  const { admin, employee } = engine.users
  t.equal(await lockHolder(engine.store, taskId), employee.userId)
  const done = await engine.call('runExternalTaskAction', 'POST', `/external/task/${taskId}/action/complete`, {
    user: admin.userId,
    body: { ...HR, processInstanceId, dataInstance: { days: 4 } },
  })
  t.same(done.body, { isSuccess: true }, "another user's lock does not stop a headless action")
  const stored = await storedInstance(engine.store, processInstanceId)
  t.match(stored.processInstance.tasks, [
    { taskId, status: 'completed', completedBy: admin.userId },
    { stepId: 'approve', status: 'open' },
  ])
  t.same(stored.dataInstance, { days: 4, lastAction: 'complete' }, 'the given data, then userTaskActivity (logActivity)')
  t.equal((await storedActivityTypes(engine.store, processInstanceId)).at(-1), 'complete')
  t.equal((await notificationRecordOf(engine.store, processInstanceId))?.eventType, 'TaskCompleted')
  t.equal(await lockHolder(engine.store, taskId), null)
})

t.test('headless action: an invalid or unoffered actionType is 400 wm3110, a closed task 409, and nothing changes', async (t) => {
  const { engine, processInstanceId, taskId } = await setUp(t)
  const { employee, stranger } = engine.users
  const before = await storedInstance(engine.store, processInstanceId)
  const act = (user: string, action: string, body: Record<string, unknown> = {}) =>
    engine.call('runExternalTaskAction', 'POST', `/external/task/${taskId}/action/${action}`, {
      user,
      body: { ...HR, processInstanceId, ...body },
    })
  t.match(await act(employee.userId, 'approve'), { status: 400, body: { code: 'wm3110' } })
  t.match(await act(employee.userId, 'return'), { status: 400, body: { code: 'wm3110' } }, 'the request step offers no return')
  t.match(await act(stranger.userId, 'complete'), { status: 404, body: { code: 'wm3001' } })
  t.match(await engine.call('runExternalTaskAction', 'POST', `/external/task/${taskId}/action/complete`, { body: { processInstanceId } }), {
    status: 401,
  })
  t.match(
    await engine.call('runExternalTaskAction', 'POST', `/external/task/${taskId}/action/complete`, { user: employee.userId, body: {} }),
    { status: 400, body: { code: 'wm4000' } },
  )
  t.equal((await storedInstance(engine.store, processInstanceId)).version, before.version)
  await act(employee.userId, 'cancel')
  t.match(await act(employee.userId, 'complete'), { status: 409, body: { code: 'wm3041' } }, 'the task has ended')
  t.equal((await storedInstance(engine.store, processInstanceId)).processStatus, 'cancelled')
})

t.test('headless action: an engine failure while advancing rolls back and answers 500 wm3050', async (t) => {
  const engine = await startHrEngine(t)
  await deployExample(engine.store, 'leave-request', {
    ...HR,
    edit: (body) => {
      const functions = body.functions as Record<string, { steps: unknown[] }>
      functions.bookLeave!.steps = [{ http: { method: 'GET', url: "'http://127.0.0.1:1/unreachable'" }, as: 'vars.answer' }]
    },
  })
  const { employee, manager } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const approval = (await completeTask(engine, employee, started)).body
  const processInstanceId = started.context.processInstance.processInstanceId
  const approveTask = approval.context.processInstance.tasks.find((task) => task.stepId === 'approve')!
  const before = await storedInstance(engine.store, processInstanceId)
  const failed = await engine.call('runExternalTaskAction', 'POST', `/external/task/${approveTask.taskId}/action/complete`, {
    user: manager.userId,
    body: { ...HR, processInstanceId, dataInstance: { days: 2 } },
  })
  t.match(failed, { status: 500, body: { code: 'wm3050' } })
  const after = await storedInstance(engine.store, processInstanceId)
  t.equal(after.version, before.version, 'nothing stored')
  t.same(after.dataInstance, before.dataInstance, 'the data given with the action was not kept')
})

t.test("assignToUser: the tenant's user becomes assignee and contributor, assign logged, Assigned sent", async (t) => {
  const { engine, processInstanceId, taskId } = await setUp(t)
  const { admin, manager, stranger } = engine.users
  const assigned = await engine.call('assignTaskToUser', 'POST', `/external/task/${taskId}/assignToUser`, {
    user: admin.userId,
    body: { ...HR, processInstance: processInstanceId, targetUserId: manager.userId },
  })
  t.same(assigned.body, { isSuccess: true })
  const stored = await storedInstance(engine.store, processInstanceId)
  t.match(stored.processInstance.tasks[0], { taskId, userId: manager.userId, userName: 'Max Manager' })
  t.ok(stored.processInstance.contributorUsers.includes(manager.userId))
  t.equal((await storedActivityTypes(engine.store, processInstanceId)).at(-1), 'assign')
  t.equal((await notificationRecordOf(engine.store, processInstanceId))?.eventType, 'Assigned')

  const version = stored.version
  const assign = (body: Record<string, unknown>, path = `/external/task/${taskId}/assignToUser`) =>
    engine.call('assignTaskToUser', 'POST', path, { user: admin.userId, body: { ...HR, processInstance: processInstanceId, ...body } })
  t.match(await assign({ targetUserId: 'nobody' }), { status: 404, body: { code: 'wm3120' } })
  t.match(await assign({ targetUserId: stranger.userId }), { status: 404, body: { code: 'wm3120' } }, 'a user of another app is not found')
  t.match(
    await assign({ targetUserId: manager.userId, appId: 'sales' }),
    { status: 404, body: { code: 'wm3001' } },
    "another app's instance is not found",
  )
  t.match(await assign({ targetUserId: manager.userId }, '/external/task/nope/assignToUser'), { status: 404, body: { code: 'wm3005' } })
  t.match(await assign({ targetUserId: undefined }), { status: 400, body: { code: 'wm4000' } })
  t.equal((await storedInstance(engine.store, processInstanceId)).version, version)
})

t.test("assignToUser resolves the target with the model's getUser function when there is one", async (t) => {
  const engine = await startHrEngine(t)
  await deployExample(engine.store, 'leave-request', {
    ...HR,
    edit: (body) => {
      const functions = body.functions as Record<string, unknown>
      functions.directory = {
        input: { type: 'object', properties: { targetUserId: { type: 'string' } } },
        output: { type: 'object', properties: { userId: { type: 'string' }, userName: { type: 'string' } } },
        steps: [
          { if: "input.targetUserId = 'ghost'", then: [{ fail: "'no such user'" }] },
          { set: { 'output.userId': "'ext-' & input.targetUserId", 'output.userName': "'External ' & input.targetUserId" } },
        ],
      }
      ;(body.namedFunctions as Record<string, string>).getUser = 'directory'
    },
  })
  const session = (await startLeaveRequest(engine, engine.users.employee)).body
  const processInstanceId = session.context.processInstance.processInstanceId
  const taskId = formTask(session).taskId
  const admin = engine.users.admin.userId
  await engine.call('assignTaskToUser', 'POST', `/external/task/${taskId}/assignToUser`, {
    user: admin,
    body: { ...HR, processInstance: processInstanceId, targetUserId: 'bob' },
  })
  t.match((await storedInstance(engine.store, processInstanceId)).processInstance.tasks[0], { userId: 'ext-bob', userName: 'External bob' })
  t.match(
    await engine.call('assignTaskToUser', 'POST', `/external/task/${taskId}/assignToUser`, {
      user: admin,
      body: { ...HR, processInstance: processInstanceId, targetUserId: 'ghost' },
    }),
    { status: 404, body: { code: 'wm3120' } },
    'getUser failing means not found',
  )
})

t.test('assignToSwimlane clears the assignee and sets a swimlane of the model only', async (t) => {
  const { engine, processInstanceId, taskId } = await setUp(t)
  const admin = engine.users.admin.userId
  const moved = await engine.call('assignTaskToSwimlane', 'POST', `/external/task/${taskId}/assignToSwimlane`, {
    user: admin,
    body: { ...HR, processInstance: processInstanceId, swimlane: 'hr' },
  })
  t.same(moved.body, { isSuccess: true })
  const task = (await storedInstance(engine.store, processInstanceId)).processInstance.tasks[0]!
  t.equal(task.swimlane, 'hr')
  t.notOk('userId' in task || 'userName' in task, 'userId and userName cleared')
  t.equal((await notificationRecordOf(engine.store, processInstanceId))?.eventType, 'Assigned')
  const version = (await storedInstance(engine.store, processInstanceId)).version
  t.match(
    await engine.call('assignTaskToSwimlane', 'POST', `/external/task/${taskId}/assignToSwimlane`, {
      user: admin,
      body: { ...HR, processInstance: processInstanceId, swimlane: 'board' },
    }),
    { status: 400, body: { code: 'wm3121' } },
  )
  t.equal((await storedInstance(engine.store, processInstanceId)).version, version)
})

t.test('execute standalone: an app function with inputs and outputs passed through, no context', async (t) => {
  const engine = await startHrEngine(t)
  const user = engine.users.employee.userId
  const run = await engine.call<FunctionResult>('executeExternalFunction', 'POST', '/external/function/vatOf/execute', {
    user,
    body: { ...HR, inputParams: { amount: 100 } },
  })
  t.same(run.body, { output: { vat: 20 } })
  t.match(await engine.call('executeExternalFunction', 'POST', '/external/function/nope/execute', { user, body: { ...HR } }), {
    status: 404,
    body: { code: 'wm3054' },
  })
  t.match(
    await engine.call('executeExternalFunction', 'POST', '/external/function/vatOf/execute', { user, body: {} }),
    { status: 400, body: { code: 'wm4000' } },
    'neither processInstanceId nor appId',
  )
  t.match(
    await engine.call('executeExternalFunction', 'POST', '/external/function/vatOf/execute', {
      user: engine.users.stranger.userId,
      body: { ...HR },
    }),
    { status: 404, body: { code: 'wm3054' } },
    "another app's functions are invisible to its users",
  )
})

t.test('execute in a process context: output merged into the stored dataInstance; required fields and user checked', async (t) => {
  const { engine, session, processInstanceId, taskId } = await setUp(t)
  const { employee } = engine.users
  const ids = { ...HR, processInstanceId, processId: 'leave-request', businessKey: session.context.processInstance.businessKey, taskId }
  const run = await engine.call<FunctionResult>('executeExternalFunction', 'POST', '/external/function/vatOf/execute', {
    user: employee.userId,
    body: { ...ids, inputParams: { amount: 50 } },
  })
  t.same(run.body.output, { vat: 10 })
  t.same(run.body.dataInstance, { days: 3, reason: 'Family visit', vat: 10 })
  t.same((await storedInstance(engine.store, processInstanceId)).dataInstance, { days: 3, reason: 'Family visit', vat: 10 }, 'stored')
  const version = (await storedInstance(engine.store, processInstanceId)).version
  t.match(
    await engine.call('executeExternalFunction', 'POST', '/external/function/vatOf/execute', {
      user: employee.userId,
      body: { ...ids, taskId: undefined },
    }),
    { status: 400, body: { code: 'wm4000', parameters: { field: 'body.taskId' } } },
  )
  t.match(await engine.call('executeExternalFunction', 'POST', '/external/function/vatOf/execute', { body: ids }), {
    status: 401,
    body: { code: 'wm4010' },
  })
  t.match(
    await engine.call('executeExternalFunction', 'POST', '/external/function/vatOf/execute', {
      user: engine.users.stranger.userId,
      body: ids,
    }),
    { status: 404, body: { code: 'wm3001' } },
  )
  t.equal((await storedInstance(engine.store, processInstanceId)).version, version)
})

t.test('changeStep by processId + businessKey: open tasks cancelled (locks released), data and status applied', async (t) => {
  const { engine, session, processInstanceId, taskId } = await setUp(t)
  const businessKey = session.context.processInstance.businessKey
  const admin = engine.users.admin.userId
  const moved = await engine.call('changeProcessStep', 'POST', '/external/process/changeStep', {
    user: admin,
    body: { ...HR, processId: 'leave-request', businessKey, stepId: 'hrReview', dataInstance: { days: 30 } },
  })
  t.same(moved.body, { isSuccess: true })
  const stored = await storedInstance(engine.store, processInstanceId)
  t.match(stored.processInstance.tasks, [
    { taskId, status: 'cancelled' },
    { stepId: 'hrReview', status: 'open' },
  ])
  t.same(stored.dataInstance, { days: 30 })
  t.equal(stored.processStatus, 'running')
  t.equal(await lockHolder(engine.store, taskId), null, "the cancelled task's lock is released")
  t.equal((await storedActivityTypes(engine.store, processInstanceId)).at(-1), 'changeStep')

  const version = stored.version
  const change = (body: Record<string, unknown>) =>
    engine.call('changeProcessStep', 'POST', '/external/process/changeStep', { user: admin, body: { ...HR, ...body } })
  t.match(await change({ processInstanceId, stepId: 'nowhere' }), { status: 404, body: { code: 'wm3130' } })
  t.match(await change({ processInstanceId: 'missing', stepId: 'approve' }), { status: 400, body: { code: 'wm3131' } })
  t.match(await change({ processId: 'leave-request', businessKey: 'LR-none', stepId: 'approve' }), {
    status: 400,
    body: { code: 'wm3131' },
  })
  t.match(
    await change({ processInstanceId, appId: 'sales', stepId: 'approve' }),
    { status: 400, body: { code: 'wm3131' } },
    "another app's instance",
  )
  t.match(await change({ stepId: 'approve' }), { status: 400, body: { code: 'wm4000' } })
  t.equal((await storedInstance(engine.store, processInstanceId)).version, version)

  await change({ processInstanceId, stepId: 'approve', status: 'completed' })
  t.equal((await storedInstance(engine.store, processInstanceId)).processStatus, 'completed', 'the given status is applied')
})

t.test("appclose releases the user's lock of the task; DELETE /external/locks/:userId all of them, within the tenant", async (t) => {
  const { engine, taskId } = await setUp(t)
  const { admin, employee, colleague } = engine.users
  const second = (await startLeaveRequest(engine, employee)).body
  const secondTask = formTask(second).taskId
  t.match(
    await engine.call('closeApp', 'POST', '/appclose', { user: colleague.userId, body: { ...HR, taskId, userId: employee.userId } }),
    { status: 403, body: { code: 'wm4031' } },
  )
  t.equal(await lockHolder(engine.store, taskId), employee.userId, "another user cannot close someone's lock")
  t.match(
    await engine.call('closeApp', 'POST', '/appclose', {
      user: employee.userId,
      body: { appId: 'sales', taskId, userId: employee.userId },
    }),
    { status: 404, body: { code: 'wm3005' } },
  )
  t.equal(await lockHolder(engine.store, taskId), employee.userId, 'nor a request naming another app')
  t.same(
    (await engine.call('closeApp', 'POST', '/appclose', { user: colleague.userId, body: { ...HR, taskId, userId: colleague.userId } }))
      .body,
    { status: 'OK' },
  )
  t.equal(await lockHolder(engine.store, taskId), employee.userId, 'closing a lock one does not hold releases nothing')
  await engine.call('closeApp', 'POST', '/appclose', { user: employee.userId, body: { ...HR, taskId, userId: employee.userId } })
  t.equal(await lockHolder(engine.store, taskId), null)
  t.equal(await lockHolder(engine.store, secondTask), employee.userId)

  t.match(await engine.call('releaseUserLocks', 'DELETE', `/external/locks/${employee.userId}?appId=sales`, { user: admin.userId }), {
    status: 404,
    body: { code: 'wm3120' },
  })
  t.equal(await lockHolder(engine.store, secondTask), employee.userId, 'a request naming another tenant is left alone')
  t.match(await engine.call('releaseUserLocks', 'DELETE', `/external/locks/${employee.userId}?appId=hr`, { user: colleague.userId }), {
    status: 403,
    body: { code: 'wm4031' },
  })
  t.equal(await lockHolder(engine.store, secondTask), employee.userId, "a user who is not admin cannot release another user's locks")
  t.same((await engine.call('releaseUserLocks', 'DELETE', `/external/locks/${employee.userId}?appId=hr`, { user: admin.userId })).body, {
    status: 'OK',
  })
  t.equal(await lockHolder(engine.store, secondTask), null)
  t.match(await engine.call('closeApp', 'POST', '/appclose', { user: employee.userId, body: { taskId } }), {
    status: 400,
    body: { code: 'wm4000' },
  })
})
