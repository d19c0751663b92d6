import t, { type Test } from 'tap'
import { compileProcess } from './compile.js'
import { exampleModel, fakeEnvironment, fakeHost, type FakeHost, refusal, user } from './test-support.js'
import type { CompiledProcess, FlowFunctionDefinition, ProcessModelBody, ProcessState, RuntimeUser, Task, Transition } from './types.js'

const employee = user('emma', ['employee'], 'Emma Employee')
const manager = user('max', ['manager'], 'Max Manager')
const hr = user('hana', ['hr'], 'Hana HR')
const users = [employee, manager, hr]

const hrLibrary = exampleModel<{ functions: Record<string, FlowFunctionDefinition> }>('hr-lib').modelBody.functions

function leaveHost(constants: Record<string, string> = { payrollOnline: 'yes', vatRate: '0.2' }): FakeHost {
  return fakeHost({ constants, users, appFunctions: hrLibrary })
}

const leave = compileProcess(exampleModel('leave-request'))
const purchase = compileProcess(exampleModel('purchase'))

function openTasks(state: ProcessState): Task[] {
  return state.processInstance.tasks.filter((task) => task.status === 'open')
}

function onlyOpenTask(t: Test, state: ProcessState): Task {
  const open = openTasks(state)
  t.equal(open.length, 1, 'exactly one open task')
  return open[0] as Task
}

async function startLeave(days: number, host = leaveHost()): Promise<{ started: Transition; host: FakeHost }> {
  const env = fakeEnvironment(employee, host)
  const started = await leave.start(
    { input: { days, reason: 'holiday' }, processInstanceId: 'pi-1', appId: 'hr', organizationId: 'acme', initiator: employee },
    env,
  )
  return { started, host }
}

async function actAs(
  process: CompiledProcess,
  actor: RuntimeUser,
  state: ProcessState,
  taskId: string,
  actionType: 'complete' | 'cancel' | 'return',
  host: FakeHost,
  dataInstance?: Record<string, unknown>,
): Promise<Transition> {
  return process.act(
    state,
    { taskId, actionType, ...(dataInstance ? { dataInstance } : {}) },
    fakeEnvironment(actor, host, {}, { next: 100 + state.processInstance.tasks.length * 10 }),
  )
}

t.test('start creates the instance, evaluates the businessKey and waits at the first user task, assigned to the initiator', async (t) => {
  const { started } = await startLeave(5)
  const instance = started.state.processInstance
  t.match(instance, {
    processInstanceId: 'pi-1',
    processId: 'leave-request',
    processName: 'Leave request',
    appId: 'hr',
    organizationId: 'acme',
    modelVersion: 1,
    processStatus: 'running',
    initiator: 'emma',
  })
  t.match(instance.businessKey, /^LR-id-\d+/, 'businessKey from the model expression, $uuid() included')
  t.same(started.state.dataInstance, { days: 5, reason: 'holiday' }, 'the input is the first dataInstance')
  const task = onlyOpenTask(t, started.state)
  t.match(task, {
    stepId: 'request',
    name: 'Request leave',
    swimlane: 'employee',
    userId: 'emma',
    userName: 'Emma Employee',
    form: 'leave-form',
    preForms: ['leave-intro'],
  })
  t.same(
    started.effects.map((effect) => effect.kind),
    ['taskCreated'],
  )
  t.match(instance.threads, [{ stepId: 'request', status: 'waiting' }])
})

t.test('validateInput reports what breaks the model input schema', async (t) => {
  t.same(await leave.validateInput({ days: 3 }), [])
  t.match(await leave.validateInput({ days: 0 }), [/days must be >= 1/])
  t.match(await leave.validateInput({ days: 2, colour: 'red' }), [/must not have the property "colour"/])
  t.match(await leave.validateInput({}), [/must have required property 'days'/])
})

t.test('a short leave request runs submit → approve → switch default → book → parallel → join → end', async (t) => {
  const { started, host } = await startLeave(5)
  const request = onlyOpenTask(t, started.state)
  const submitted = await actAs(leave, employee, started.state, request.taskId, 'complete', host, {
    days: 5,
    reason: 'holiday',
    note: 'form data',
  })
  const approve = onlyOpenTask(t, submitted.state)
  t.match(approve, { stepId: 'approve', swimlane: 'manager' })
  t.notOk(approve.userId, 'a swimlane task waits in the pool')
  t.match(
    submitted.state.processInstance.tasks.find((task) => task.taskId === request.taskId),
    { status: 'completed', completedBy: 'emma', actionType: 'complete' },
  )
  t.equal(submitted.state.dataInstance.note, 'form data', 'the form data replaced the dataInstance')

  const approved = await actAs(leave, manager, submitted.state, approve.taskId, 'complete', host)
  const instance = approved.state.processInstance
  t.equal(instance.processStatus, 'completed')
  t.same(openTasks(approved.state), [])
  t.match(
    approved.state.dataInstance,
    { booked: true, bookedBy: 'max', payrollUpdated: true, teamInformed: true },
    'bookLeave ran as the approver, both branches ran',
  )
  t.same(host.dataOperations, [
    { operation: 'insert', collection: 'Leave bookings', doc: { businessKey: instance.businessKey, days: 5, employee: 'emma' } },
  ])
  t.same(
    approved.effects.map((effect) => effect.kind),
    ['taskEnded', 'processEnded'],
  )
  t.ok(
    instance.threads.every((thread) => thread.status === 'done'),
    'every thread is done',
  )
  t.equal(instance.threads.length, 1, 'the branch threads are folded back into their parent at the join')
})

t.test('more than 10 days goes through the switch case to an HR review', async (t) => {
  const { started, host } = await startLeave(12)
  const submitted = await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host)
  const approved = await actAs(leave, manager, submitted.state, onlyOpenTask(t, submitted.state).taskId, 'complete', host)
  t.match(onlyOpenTask(t, approved.state), { stepId: 'hrReview', swimlane: 'hr' })
  t.equal(approved.state.processInstance.processStatus, 'running')
  const reviewed = await actAs(leave, hr, approved.state, onlyOpenTask(t, approved.state).taskId, 'complete', host)
  t.equal(reviewed.state.processInstance.processStatus, 'completed')
})

t.test('return sends the request back as a new task for the initiator, named from the user store', async (t) => {
  const { started, host } = await startLeave(5)
  const submitted = await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host)
  const returned = await actAs(leave, manager, submitted.state, onlyOpenTask(t, submitted.state).taskId, 'return', host)
  const again = onlyOpenTask(t, returned.state)
  t.match(again, { stepId: 'request', userId: 'emma', userName: 'Emma Employee' })
  t.not(again.taskId, onlyOpenTask(t, started.state).taskId, 'a new task, not the old one reopened')
  t.equal(returned.state.processInstance.tasks.length, 3)
})

t.test('cancel ends the process as cancelled', async (t) => {
  const { started, host } = await startLeave(5)
  const cancelled = await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'cancel', host)
  t.equal(cancelled.state.processInstance.processStatus, 'cancelled')
  t.match(cancelled.state.processInstance.tasks[0], { status: 'cancelled', actionType: 'cancel' })
  t.same(
    cancelled.effects.map((effect) => effect.kind),
    ['taskEnded', 'processEnded'],
  )
})

t.test('acting on a task that is not open, or unknown, or with an action the step lacks, is refused', async (t) => {
  const { started, host } = await startLeave(5)
  const request = onlyOpenTask(t, started.state)
  const submitted = await actAs(leave, employee, started.state, request.taskId, 'complete', host)
  t.match(await refusal(actAs(leave, employee, submitted.state, request.taskId, 'complete', host)), {
    kind: 'conflict',
    details: { target: 'task' },
  })
  t.match(await refusal(actAs(leave, employee, submitted.state, 'nope', 'complete', host)), {
    kind: 'notFound',
    details: { target: 'task' },
  })
  t.match(await refusal(actAs(leave, employee, started.state, request.taskId, 'return', host)), {
    kind: 'notFound',
    details: { target: 'action' },
  })
})

t.test('the runtime never changes the state it is given', async (t) => {
  const { started, host } = await startLeave(5)
  const snapshot = structuredClone(started.state)
  await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host, { days: 9 })
  t.same(started.state, snapshot)
})

t.test('onError fail: the thread and the process fail, the other branch goes on, and retry continues to the end', async (t) => {
  const host = leaveHost({ payrollOnline: 'no' })
  const { started } = await startLeave(5, host)
  const submitted = await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host)
  const approved = await actAs(leave, manager, submitted.state, onlyOpenTask(t, submitted.state).taskId, 'complete', host)
  const instance = approved.state.processInstance
  t.equal(instance.processStatus, 'failed')
  const failed = instance.threads.find((thread) => thread.status === 'failed')
  t.match(failed, { stepId: 'updatePayroll', error: { message: 'Payroll system is offline', code: 'PAYROLL_OFFLINE' } })
  t.match(
    instance.threads.find((thread) => thread.stepId === 'joined' && thread.status === 'done'),
    { join: 'joined' },
    'informTeam reached the join',
  )
  t.equal(approved.state.dataInstance.teamInformed, true)
  t.match(
    approved.effects.find((effect) => effect.kind === 'threadFailed'),
    { thread: { stepId: 'updatePayroll' } },
  )

  t.match(await refusal(leave.retry(approved.state, 'no-such-thread', fakeEnvironment(manager, host))), {
    kind: 'notFound',
    details: { target: 'thread' },
  })
  const stillOffline = await leave.retry(approved.state, failed?.threadId ?? '', fakeEnvironment(manager, host))
  t.equal(stillOffline.state.processInstance.processStatus, 'failed', 'a retry that fails again leaves the thread failed')

  host.constants.payrollOnline = 'yes'
  const retried = await leave.retry(approved.state, failed?.threadId ?? '', fakeEnvironment(manager, host))
  t.equal(retried.state.processInstance.processStatus, 'completed')
  t.equal(retried.state.dataInstance.payrollUpdated, true)
})

t.test('onError rollback (the default): the failure is thrown and the given state stays as it was', async (t) => {
  const host = fakeHost({ constants: { payrollOnline: 'yes' }, users, data: async () => Promise.reject(new Error('bookings store down')) })
  const { started } = await startLeave(5, host)
  const submitted = await actAs(leave, employee, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host)
  const snapshot = structuredClone(submitted.state)
  t.match(await refusal(actAs(leave, manager, submitted.state, onlyOpenTask(t, submitted.state).taskId, 'complete', host)), {
    kind: 'technical',
    message: /bookings store down/,
  })
  t.same(submitted.state, snapshot)
})

t.test('a function action runs on the form data, answers output and info, and leaves the task open', async (t) => {
  const { started, host } = await startLeave(5)
  const task = onlyOpenTask(t, started.state)
  const env = fakeEnvironment(employee, host)
  const result = await leave.runActionFunction(
    started.state,
    { taskId: task.taskId, customType: 'checkBalance', dataInstance: { days: 25 } },
    env,
  )
  t.same(result.output, { remaining: -5, balanceOk: false })
  t.same(result.infoList, ['Not enough leave days'])
  t.equal(onlyOpenTask(t, result.state).taskId, task.taskId)
  t.same(result.state.dataInstance, { days: 25 }, 'the data is the form data')
  t.match(await refusal(leave.runActionFunction(started.state, { taskId: task.taskId, customType: 'nope', dataInstance: {} }, env)), {
    kind: 'notFound',
    details: { target: 'action' },
  })
})

t.test('runFunction runs a task function in the process context, and a library function standalone', async (t) => {
  const { started, host } = await startLeave(5)
  const task = onlyOpenTask(t, started.state)
  const env = fakeEnvironment(employee, host)
  const result = await leave.runFunction('suggestDates', { state: started.state, input: { from: 'Monday' }, taskId: task.taskId }, env)
  t.same(result.output, { suggestion: 'Start on Monday' })
  t.same(result.dataInstance, { days: 5, reason: 'holiday', suggested: true })
  const vat = await leave.runFunction('vatOf', { state: null, input: { amount: 100 } }, env)
  t.same(vat.output, { vat: 20 }, 'an app function with $constant')
  t.match(await refusal(leave.runFunction('missing', { state: null, input: {} }, env)), {
    kind: 'notFound',
    details: { target: 'function' },
  })
})

t.test('runFunction changes nothing of the state it runs on, even through the task written into its data', async (t) => {
  const model = exampleModel('leave-request')
  const functions = model.modelBody.functions ?? {}
  model.modelBody.functions = {
    ...functions,
    rewriteTask: { steps: [{ set: { 'data.task': 'task', 'data.days': '99' } }, { set: { 'data.task.status': "'cancelled'" } }] },
  }
  const aliasing = compileProcess(model)
  const { started, host } = await startLeave(5)
  const task = onlyOpenTask(t, started.state)
  const before = JSON.stringify(started.state)
  const env = fakeEnvironment(employee, host)
  const result = await aliasing.runFunction('rewriteTask', { state: started.state, input: {}, taskId: task.taskId }, env)
  t.match(result.dataInstance, { days: 99, task: { taskId: task.taskId, status: 'cancelled' } }, 'the run wrote its own data')
  t.equal(JSON.stringify(started.state), before, 'the instance, its task and its data are as they were')
})

t.test('changeStep cancels the open tasks and moves the process to the step', async (t) => {
  const { started, host } = await startLeave(5)
  const moved = await leave.changeStep(started.state, 'approve', { dataInstance: { days: 2 } }, fakeEnvironment(manager, host))
  t.match(moved.state.processInstance.tasks, [
    { stepId: 'request', status: 'cancelled' },
    { stepId: 'approve', status: 'open' },
  ])
  t.same(moved.state.dataInstance, { days: 2 })
  t.same(
    moved.effects.map((effect) => effect.kind),
    ['taskCancelled', 'taskCreated'],
  )
  t.match(await refusal(leave.changeStep(started.state, 'nowhere', {}, fakeEnvironment(manager, host))), {
    kind: 'notFound',
    details: { target: 'step' },
  })
  const closed = await leave.changeStep(started.state, 'done', { status: 'completed' }, fakeEnvironment(manager, host))
  t.equal(closed.state.processInstance.processStatus, 'completed')
  t.same(openTasks(closed.state), [])
})

t.test('inform evaluates each header into the informList', async (t) => {
  const { started, host } = await startLeave(5)
  t.same(await leave.inform(started.state, fakeEnvironment(employee, host)), [
    { key: 'days', label: 'Days', header: '5 days', display: true },
    { key: 'status', label: 'Status', header: 'running' },
  ])
})

t.test('purchase: two parallel user tasks join before the library function runs and the process ends', async (t) => {
  const buyer = user('bob', ['buyer'])
  const host = fakeHost({ constants: { vatRate: '0.2' }, users, appFunctions: hrLibrary })
  const started = await purchase.start(
    { input: { item: 'pen', amount: 10 }, processInstanceId: 'p-1', appId: 'hr', organizationId: 'acme', initiator: buyer },
    fakeEnvironment(buyer, host),
  )
  t.match(started.state.processInstance, { processName: 'Purchase approval', processId: 'purchase' })
  t.match(started.state.processInstance.businessKey, /^id-/, 'a generated businessKey without a model expression')
  const submitted = await actAs(purchase, buyer, started.state, onlyOpenTask(t, started.state).taskId, 'complete', host)
  const approvals = openTasks(submitted.state)
  t.same(approvals.map((task) => task.stepId).sort(), ['finance', 'legal'])
  t.not(approvals[0]?.threadId, approvals[1]?.threadId, 'each branch has its own thread')
  const finance = approvals.find((task) => task.stepId === 'finance') as Task
  const legal = approvals.find((task) => task.stepId === 'legal') as Task
  const oneDone = await actAs(purchase, user('fin', ['finance']), submitted.state, finance.taskId, 'complete', host)
  t.equal(oneDone.state.processInstance.processStatus, 'running', 'the join waits for the other branch')
  t.same(
    openTasks(oneDone.state).map((task) => task.stepId),
    ['legal'],
  )
  const bothDone = await actAs(purchase, user('leo', ['legal']), oneDone.state, legal.taskId, 'complete', host)
  t.equal(bothDone.state.processInstance.processStatus, 'completed')
})

t.test('a model that loops through automatic steps is stopped by the automatic-step limit', async (t) => {
  const looping = compileProcess({
    modelID: 'loop',
    type: 'process',
    appId: 'hr',
    version: 1,
    updateDate: '2026-01-01T00:00:00.000Z',
    modelBody: {
      start: 'spin',
      steps: { spin: { type: 'function', function: 'noop', next: 'check' }, check: { type: 'switch', cases: [], default: 'spin' } },
      functions: { noop: { steps: [] } },
    } satisfies ProcessModelBody,
  })
  t.match(
    await refusal(
      looping.start(
        { input: {}, processInstanceId: 'x', appId: 'hr', organizationId: 'acme', initiator: employee },
        fakeEnvironment(employee, leaveHost(), { maxAutomaticSteps: 50 }),
      ),
    ),
    {
      kind: 'technical',
      message: /more than 50 automatic steps/,
    },
  )
})
