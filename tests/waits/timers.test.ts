import t, { type Test } from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { completeTask, openForm, taskIds } from '../../services/testing/workflow.js'
import { HOUR, HR, startWaitStack, type WaitStack } from './support.js'

/** Waits an hour, then asks for an approval; `until` waits for the date the input gives. */
const REMINDER = {
  input: { type: 'object' },
  start: 'route',
  steps: {
    route: { type: 'switch', cases: [{ when: '$exists(data.wakeAt)', next: 'pauseUntil' }], default: 'pause' },
    pause: { type: 'timer', duration: 'PT1H', next: 'approve' },
    pauseUntil: { type: 'timer', until: 'data.wakeAt', next: 'approve' },
    approve: {
      type: 'userTask',
      name: 'Approve',
      swimlane: 'manager',
      actions: [{ actionType: 'complete', next: 'done' }],
    },
    done: { type: 'end' },
  },
  swimlanes: { manager: { name: 'Managers' } },
}

async function reminderStack(t: Test, engines = 1): Promise<WaitStack> {
  const stack = await startWaitStack(t, { engines })
  await stack.deploy('reminder', REMINDER)
  return stack
}

const openTasks = async (stack: WaitStack, id: string) =>
  (await stack.context(id)).processInstance.tasks.filter((task) => task.status === 'open').map((task) => task.stepId)

t.test('a timer step waits for its duration: the batch worker fires it at its time, once, with a timerFired activity', async (t) => {
  const stack = await reminderStack(t)
  const id = await stack.start('reminder')
  const waiting = await stack.context(id)
  t.match(waiting.processInstance.threads, [{ stepId: 'pause', status: 'waiting', timer: { dueAt: '2026-03-02T09:30:00.000Z' } }])
  const [job] = await stack.jobs('timer', id)
  t.match(
    job,
    { status: 'waiting', dueAt: new Date('2026-03-02T09:30:00.000Z'), scheduleKey: /^timer:/ },
    'one timer job, stored with the start',
  )

  stack.clock.advance(HOUR - 1000)
  await stack.batchWorkerCaughtUp()
  t.same(await openTasks(stack, id), [], 'nothing fires before its time')

  stack.clock.advance(1000)
  await stack.until(
    () => openTasks(stack, id),
    (open) => open.length === 1,
  )
  t.same(await openTasks(stack, id), ['approve'], 'the thread went on to the next step')
  t.match(await stack.activities(id, 'timerFired'), [
    { type: 'timerFired', userId: null, stepId: 'pause', details: { dueAt: '2026-03-02T09:30:00.000Z' } },
  ])
  const status = await stack.client.call('getProcessStatus', 'GET', `/process/${id}`, { user: stack.users.employee.userId })
  t.match(status.body, { data: { processStatus: 'running', tasks: [{ stepId: 'approve' }] } })
})

t.test('a timer with until waits for the date its expression gives; a date past fires at once', async (t) => {
  const stack = await reminderStack(t)
  const later = await stack.start('reminder', { wakeAt: '2026-03-05T00:00:00Z' })
  const past = await stack.start('reminder', { wakeAt: '2026-01-01T00:00:00Z' })
  t.match((await stack.context(later)).processInstance.threads, [{ timer: { dueAt: '2026-03-05T00:00:00.000Z' } }])
  await stack.until(
    () => openTasks(stack, past),
    (open) => open.length === 1,
  )
  t.same(await openTasks(stack, later), [], 'the later one still waits')
})

t.test('two engines over one store fire a timer once', async (t) => {
  const stack = await reminderStack(t, 2)
  const ids = await Promise.all([1, 2, 3, 4, 5, 6].map(() => stack.start('reminder')))
  stack.clock.advance(HOUR)
  for (const id of ids)
    await stack.until(
      () => openTasks(stack, id),
      (open) => open.length === 1,
    )
  await stack.batchWorkerCaughtUp()
  for (const id of ids) {
    t.equal((await stack.activities(id, 'timerFired')).length, 1, 'fired once')
    t.same(await openTasks(stack, id), ['approve'], 'one task, not two')
  }
  const jobs = (await Promise.all(ids.map((id) => stack.jobs('timer', id)))).flat()
  t.same(
    jobs.map((job) => [job.status, job.tryCount]),
    ids.map(() => ['done', 0]),
    'each job ran once, by one of the engines',
  )
})

t.test('a timer survives a restart: an engine started after the first stopped fires it', async (t) => {
  const stack = await reminderStack(t)
  const id = await stack.start('reminder')
  await stack.engines[0]!.app.close()
  stack.clock.advance(2 * HOUR)
  await stack.addEngine()
  await stack.until(
    () => openTasks(stack, id),
    (open) => open.length === 1,
  )
  t.equal((await stack.activities(id, 'timerFired')).length, 1)
})

t.test('a suspended instance keeps its timer until resumed, then the due timer fires; cancelling removes the timer', async (t) => {
  const stack = await reminderStack(t)
  const { admin } = stack.users
  const id = await stack.start('reminder')
  const suspend = await stack.client.call('suspendProcess', 'POST', `/process/${id}/suspend`, { user: admin.userId, body: {} })
  t.equal(suspend.status, 200)
  stack.clock.advance(2 * HOUR)
  await stack.until(
    () => stack.jobs('timer', id),
    (jobs) => jobs[0]?.dueAt.getTime() !== new Date('2026-03-02T09:30:00.000Z').getTime(),
  )
  t.same(await openTasks(stack, id), [], 'a suspended instance does not move')
  t.equal((await stack.jobs('timer', id))[0]?.status, 'waiting', 'its timer is kept')

  const resume = await stack.client.call('resumeProcess', 'POST', `/process/${id}/resume`, { user: admin.userId, body: {} })
  t.equal(resume.status, 200)
  await stack.until(
    () => openTasks(stack, id),
    (open) => open.length === 1,
  )
  t.equal((await stack.activities(id, 'timerFired')).length, 1, 'fired once resumed')

  const other = await stack.start('reminder')
  t.equal((await stack.jobs('timer', other)).length, 1)
  const cancel = await stack.client.call('cancelProcess', 'POST', `/process/${other}/cancel`, { user: admin.userId, body: {} })
  t.equal(cancel.status, 200)
  t.same(await stack.jobs('timer', other), [], 'the cancel removed the timer job in its commit')
  stack.clock.advance(2 * HOUR)
  await stack.batchWorkerCaughtUp()
  t.same(await stack.activities(other, 'timerFired'), [])
})

/** The employee starts a leave request and submits it: it waits for a manager's approval. */
async function submittedLeaveRequest(t: Test, stack: WaitStack): Promise<{ session: Session; id: string }> {
  const { employee } = stack.users
  const opened = await stack.client.call<Envelope<Session>>('openContext', 'POST', '/context', {
    user: employee.userId,
    body: { ...HR, processId: 'leave-request', input: { days: 3, reason: 'Trip' } },
  })
  const session = opened.body.data
  t.equal((await completeTask<Envelope<Session>>(stack.client, employee, session)).status, 200)
  return { session, id: session.context.processInstance.processInstanceId }
}

t.test('the leave-request example: a manager who cannot decide yet has the request come back in three days', async (t) => {
  const stack = await startWaitStack(t)
  const { manager } = stack.users
  const { session, id } = await submittedLeaveRequest(t, stack)
  // Through the gateway the session comes in its envelope.
  const forManager = (await openForm(stack.client, manager, session)).body as unknown as Envelope<Session>
  const askLater = await stack.client.call('completeAction', 'POST', '/action/complete', {
    user: manager.userId,
    body: {
      ...HR,
      ...taskIds(forManager.data),
      actionType: 'complete',
      customType: 'askAgainIn3Days',
      dataInstance: forManager.data.context.dataInstance,
    },
  })
  t.equal(askLater.status, 200, JSON.stringify(askLater.body))
  t.same(await openTasks(stack, id), [], 'no approval is open while the request waits')
  t.match((await stack.context(id)).processInstance.threads, [{ stepId: 'managerPause', status: 'waiting' }])
  stack.clock.advance(3 * 24 * HOUR)
  await stack.until(
    () => openTasks(stack, id),
    (open) => open.length === 1,
  )
  t.same(await openTasks(stack, id), ['approve'], 'the approval is back with the managers')
})

t.test('the leave-request example: an approval the manager leaves open for three days goes to HR, who decides', async (t) => {
  const stack = await startWaitStack(t)
  const { manager, hr } = stack.users
  const { session, id } = await submittedLeaveRequest(t, stack)
  const approval = async () => (await stack.context(id)).processInstance.tasks.find((task) => task.stepId === 'approve')
  t.match(await approval(), { status: 'open', swimlane: 'manager' })
  stack.clock.advance(3 * 24 * HOUR - 1000)
  await stack.batchWorkerCaughtUp()
  t.match(await approval(), { status: 'open', swimlane: 'manager' }, 'a second short of three days it is still the managers’')
  stack.clock.advance(1000)
  const moved = await stack.until(approval, (task) => task?.swimlane === 'hr')
  t.match(moved, { status: 'open', swimlane: 'hr', escalated: [0] })
  const [escalated] = await stack.activities(id, 'escalated')
  t.match(escalated, { details: { do: 'assignToSwimlane', swimlane: 'hr', note: 'The manager did not answer in 3 days: HR decides' } })
  t.equal((await openForm(stack.client, manager, session, moved?.taskId)).status, 403, 'the manager may no longer open it')
  const forHr = (await openForm(stack.client, hr, session, moved?.taskId)).body as unknown as Envelope<Session>
  t.equal(forHr.data.formContext.readOnly, false)
  t.equal((await completeTask(stack.client, hr, forHr.data, { taskId: moved?.taskId })).status, 200, 'HR approves')
  t.match(await approval(), { status: 'completed', completedBy: hr.userId, actionType: 'complete' })
})
