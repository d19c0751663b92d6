import t from 'tap'
import type { ProcessStartResult, ProcessStatusSummary } from '../../../openapi/generated/schemas.js'
import { Collections, type StoredContext } from '../../../store/collections.js'
import { notificationRecordOf } from '../../testing/instance-store.js'
import { openTestStore, startService } from '../../testing/harness.js'
import { completeTask, createHrUsers, deployHrApp, HR, startHrEngine, startLeaveRequest } from '../../testing/workflow.js'

t.test('/process/start and /external/process/start start an instance headlessly and send Created', async (t) => {
  const engine = await startHrEngine(t)
  const { admin, employee, manager } = engine.users
  for (const [operationId, path] of [
    ['startProcess', '/process/start'],
    ['startExternalProcess', '/external/process/start'],
  ] as const) {
    const answer = await engine.call<ProcessStartResult>(operationId, 'POST', path, {
      user: employee.userId,
      body: { ...HR, processId: 'purchase', input: { item: 'Desk', amount: 300 } },
    })
    t.equal(answer.status, 200)
    const { processInstanceId, processName, businessKey } = answer.body.context.processInstance
    t.equal(processName, 'Purchase approval')
    t.ok(businessKey.length > 0, 'a generated business key')
    const stored = await engine.store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
    t.match(stored, { initiator: employee.userId, processStatus: 'running', dataInstance: { item: 'Desk', amount: 300 } })
    t.equal((await notificationRecordOf(engine.store, processInstanceId))?.eventType, 'Created')
    t.equal(await engine.store.collection(Collections.taskLocks).countDocuments({ processInstanceId }), 0, 'a headless start locks nothing')
  }
  const onBehalf = await engine.call<ProcessStartResult>('startProcess', 'POST', '/process/start', {
    user: admin.userId,
    body: { ...HR, processId: 'leave-request', input: { days: 2 }, initiatorUserId: manager.userId },
  })
  t.equal(onBehalf.status, 200)
  const stored = await engine.store
    .collection<StoredContext>(Collections.contexts)
    .findOne({ _id: onBehalf.body.context.processInstance.processInstanceId })
  t.equal(stored?.initiator, manager.userId, 'initiatorUserId overrides the (admin) user')
  t.equal(stored?.processInstance.tasks[0]?.userId, manager.userId, 'assignTo initiator follows it')
})

t.test('/process/start statuses as documented: 500 wm3060 without processId, 400 for bad input, the rest', async (t) => {
  const engine = await startHrEngine(t)
  const { employee } = engine.users
  const start = (body: Record<string, unknown>, user: string | undefined = employee.userId) =>
    engine.call('startProcess', 'POST', '/process/start', { ...(user ? { user } : {}), body })
  t.match(await start({ ...HR, input: { days: 1 } }), { status: 500, body: { code: 'wm3060', parameters: { field: 'body.processId' } } })
  t.match(await start({ processId: 'leave-request', input: { days: 1 } }), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'body.appId' } },
  })
  t.match(await start({ ...HR, processId: 'leave-request', input: { days: 99 } }), { status: 400, body: { code: 'wm3004' } })
  t.match(await start({ ...HR, processId: 'leave-request' }), {
    status: 400,
    body: { code: 'wm4000', parameters: { field: 'body.input' } },
  })
  t.match(await start({ ...HR, processId: 'nope', input: {} }), { status: 404, body: { code: 'wm3002' } })
  t.match(
    await start(
      { ...HR, processId: 'leave-request', input: { days: 1 }, initiatorUserId: engine.users.stranger.userId },
      engine.users.admin.userId,
    ),
    { status: 400, body: { code: 'wm3006' } },
  )
  t.match(
    await start({ ...HR, processId: 'leave-request', input: { days: 1 }, initiatorUserId: engine.users.manager.userId }),
    { status: 403, body: { code: 'wm4031' } },
    'starting for another user is for admins',
  )
  t.match(
    await start({ ...HR, processId: 'leave-request', input: { days: 1 } }, ''),
    { status: 401, body: { code: 'wm4010' } },
    'a user is required',
  )
  t.match(await start({ ...HR, processId: 'leave-request', input: { days: 1 } }, 'no-such-user'), { status: 401, body: { code: 'wm4010' } })
  t.equal(await engine.store.collection(Collections.contexts).countDocuments(), 0, 'nothing was stored')
})

t.test('GET /process/:id answers the open tasks and the status to whoever may see the instance', async (t) => {
  const engine = await startHrEngine(t)
  const { employee, manager, outsider, stranger } = engine.users
  const started = (await startLeaveRequest(engine, employee)).body
  const submitted = (await completeTask(engine, employee, started)).body
  const id = submitted.context.processInstance.processInstanceId
  const status = await engine.call<ProcessStatusSummary>('getProcessStatus', 'GET', `/process/${id}?appId=hr`, { user: manager.userId })
  t.equal(status.status, 200)
  t.match(status.body, { processStatus: 'running', tasks: [{ stepId: 'approve', name: 'Approve leave' }] })
  t.equal(status.body.tasks.length, 1, 'only open tasks')
  t.match(await engine.call('getProcessStatus', 'GET', `/process/${id}`), { status: 401, body: { code: 'wm4010' } }, 'not without a user')
  t.match(await engine.call('getProcessStatus', 'GET', `/process/${id}`, { user: outsider.userId }), {
    status: 403,
    body: { code: 'wm4030' },
  })
  t.match(await engine.call('getProcessStatus', 'GET', `/process/${id}`, { user: stranger.userId }), {
    status: 404,
    body: { code: 'wm3001' },
  })
  t.match(await engine.call('getProcessStatus', 'GET', `/process/${id}?appId=sales`, { user: manager.userId }), {
    status: 404,
    body: { code: 'wm3001' },
  })
  t.match(await engine.call('getProcessStatus', 'GET', '/process/nope', { user: manager.userId }), {
    status: 404,
    body: { code: 'wm3001' },
  })
})

t.test('a start with a caller-chosen instance id is idempotent: the second answers the stored instance', async (t) => {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const users = await createHrUsers(store)
  const { app } = await startService(t, 'engine', { store })
  const command = {
    actor: null,
    ...HR,
    processId: 'leave-request',
    input: { days: 2 },
    initiatorUserId: users.employee.userId,
    processInstanceId: 'f3c4a1e2-0000-5000-8000-000000000001',
    lockFirstTask: false,
  }
  const first = await app.processStarter.start(command)
  const again = await app.processStarter.start(command)
  t.equal(first.stored._id, command.processInstanceId)
  t.equal(again.stored._id, first.stored._id)
  t.equal(await store.collection(Collections.contexts).countDocuments({}), 1, 'one instance stored')
})
