import t from 'tap'
import type { Session, TaskFunctionResult } from '../../../openapi/generated/schemas.js'
import { lockHolder, storedActivityTypes, storedInstance, notificationRecordOf } from '../../testing/instance-store.js'
import { formTask, HR, type HrEngine, startHrEngine, startLeaveRequest } from '../../testing/workflow.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

async function setUp(t: Tap): Promise<{
  engine: HrEngine
  session: Session
  ids: { processId: string; processInstanceId: string; businessKey: string }
  taskId: string
}> {
  const engine = await startHrEngine(t)
  const session = (await startLeaveRequest(engine, engine.users.employee)).body
  const instance = session.context.processInstance
  return {
    engine,
    session,
    ids: { processId: instance.processId, processInstanceId: instance.processInstanceId, businessKey: instance.businessKey },
    taskId: formTask(session).taskId,
  }
}

t.test('a task function runs on the given data, its data changes are stored and a taskFunction activity logged', async (t) => {
  const { engine, ids, taskId } = await setUp(t)
  const { employee } = engine.users
  const run = await engine.call<TaskFunctionResult>('runTaskFunction', 'POST', `/task/${taskId}/run/suggestDates`, {
    user: employee.userId,
    body: { ...HR, ...ids, dataInstance: { days: 5, reason: 'Trip' }, inputParams: { from: '2025-07-01' } },
  })
  t.equal(run.status, 200)
  t.same(run.body.output, { suggestion: 'Start on 2025-07-01' })
  t.same(run.body.dataInstance, { days: 5, reason: 'Trip', suggested: true }, 'dataInstance replaced the stored data before the run')
  t.same((await storedInstance(engine.store, ids.processInstanceId)).dataInstance, { days: 5, reason: 'Trip', suggested: true }, 'stored')
  t.equal((await storedActivityTypes(engine.store, ids.processInstanceId)).at(-1), 'taskFunction')
})

t.test("a function of the app runs as a task function; one that is neither the step's nor the app's is 404 wm3054", async (t) => {
  const { engine, ids, taskId } = await setUp(t)
  const { employee } = engine.users
  const vat = await engine.call<TaskFunctionResult>('runTaskFunction', 'POST', `/task/${taskId}/run/vatOf`, {
    user: employee.userId,
    body: { ...HR, ...ids, inputParams: { amount: 100 } },
  })
  t.same(vat.body.output, { vat: 20 })
  const before = await storedInstance(engine.store, ids.processInstanceId)
  const notTaskFunction = await engine.call('runTaskFunction', 'POST', `/task/${taskId}/run/checkBalance`, {
    user: employee.userId,
    body: { ...HR, ...ids },
  })
  t.match(notTaskFunction, { status: 404, body: { code: 'wm3054' } }, 'a process function not listed in taskFunctions is refused')
  t.equal((await storedInstance(engine.store, ids.processInstanceId)).version, before.version)
})

t.test('task functions: wrong input, another user, unknown task and another tenant change nothing', async (t) => {
  const { engine, ids, taskId } = await setUp(t)
  const { employee, colleague, stranger } = engine.users
  const before = await storedInstance(engine.store, ids.processInstanceId)
  const call = (user: string, path: string, body: Record<string, unknown>) =>
    engine.call('runTaskFunction', 'POST', path, { user, body: { ...HR, ...ids, ...body } })
  t.match(
    await call(employee.userId, `/task/${taskId}/run/suggestDates`, { inputParams: { from: 5 } }),
    { status: 400, body: { code: 'wm3056' } },
    "input failing the function's schema",
  )
  t.match(await call(colleague.userId, `/task/${taskId}/run/suggestDates`, {}), { status: 403, body: { code: 'wm4030' } })
  t.match(await call(employee.userId, '/task/no-such-task/run/suggestDates', {}), { status: 404, body: { code: 'wm3005' } })
  t.match(await call(stranger.userId, `/task/${taskId}/run/suggestDates`, {}), { status: 404, body: { code: 'wm3001' } })
  t.match(
    await call(employee.userId, `/task/${taskId}/run/suggestDates`, { businessKey: 'LR-other' }),
    { status: 404, body: { code: 'wm3001' } },
    'another business key',
  )
  t.match(
    await engine.call('runTaskFunction', 'POST', `/task/${taskId}/run/suggestDates`, {
      user: employee.userId,
      body: { ...HR, processInstanceId: ids.processInstanceId },
    }),
    { status: 400, body: { code: 'wm4000' } },
  )
  const after = await storedInstance(engine.store, ids.processInstanceId)
  t.equal(after.version, before.version)
  t.same(after.dataInstance, before.dataInstance)
})

t.test('a commit replaces the data and sends Updated; no activity, no function, no lock change', async (t) => {
  const { engine, ids, taskId } = await setUp(t)
  const { employee, colleague } = engine.users
  const activitiesBefore = await storedActivityTypes(engine.store, ids.processInstanceId)
  const lockBefore = await lockHolder(engine.store, taskId)
  t.equal(lockBefore, employee.userId, "the initiator holds the first task's lock")
  const committed = await engine.call('commitTask', 'POST', `/task/${taskId}/commit`, {
    user: employee.userId,
    body: { ...HR, ...ids, dataInstance: { days: 7 } },
  })
  t.same(committed.body, { success: true })
  const stored = await storedInstance(engine.store, ids.processInstanceId)
  t.same(stored.dataInstance, { days: 7 }, 'replaced, not merged, and no userTaskActivity ran (no lastAction)')
  t.same(await storedActivityTypes(engine.store, ids.processInstanceId), activitiesBefore, 'no activity')
  t.equal((await notificationRecordOf(engine.store, ids.processInstanceId))?.eventType, 'Updated')
  t.equal(await lockHolder(engine.store, taskId), lockBefore, 'lock unchanged')

  t.match(
    await engine.call('commitTask', 'POST', `/task/${taskId}/commit`, {
      user: colleague.userId,
      body: { ...HR, ...ids, dataInstance: { days: 1 } },
    }),
    { status: 403 },
  )
  t.match(await engine.call('commitTask', 'POST', `/task/${taskId}/commit`, { user: employee.userId, body: { ...HR, ...ids } }), {
    status: 400,
    body: { code: 'wm4000' },
  })
  t.same((await storedInstance(engine.store, ids.processInstanceId)).dataInstance, { days: 7 }, 'refused commits change nothing')
})
