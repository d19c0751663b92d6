import type { EditableModelBody } from '../../services/testing/models.js'
import t from 'tap'
import { Collections, type StoredBatchJob, type StoredContext, type StoredModel } from '../../store/collections.js'
import { waitUntil } from '../../services/testing/wait.js'
import { completeLeaveTask, HR, startDueStack } from './support.js'

const MINUTE = 60_000

function openTask(stored: StoredContext, stepId: string) {
  return stored.processInstance.tasks.find((task) => task.stepId === stepId && task.status === 'open')
}

t.test('a user task with dueIn is due that long after its creation, one with a dueDate expression at the date it gives', async (t) => {
  const stack = await startDueStack(t)
  const inserted = await stack.insertLeaveRequest((body) => {
    body.steps.request.dueIn = 'P3D'
    body.steps.approve.dueDate = "$fromMillis($toMillis('2026-03-02T00:00:00Z') + data.days * 86400000)"
  })
  t.equal(inserted.status, 200, JSON.stringify(inserted.body))
  const session = await stack.startLeave(stack.users.employee, 4)
  t.equal(session.formContext.task?.dueDate, '2026-03-05T08:30:00.000Z', "P3D after the task was created (the engine's clock)")
  const instance = session.context.processInstance
  const completed = await completeLeaveTask(stack, stack.users.employee, session)
  t.equal(completed.status, 200)
  const stored = await stack.context(instance.processInstanceId)
  t.equal(openTask(stored, 'approve')?.dueDate, '2026-03-06T00:00:00.000Z', 'the expression gave four days after March 2nd')
  t.equal(stored.nextDueAt?.toISOString(), '2026-03-06T00:00:00.000Z', 'the instance is indexed by its earliest open due date')
  t.equal(
    stored.processInstance.tasks.find((task) => task.stepId === 'request')?.dueDate,
    '2026-03-05T08:30:00.000Z',
    'an ended task keeps its due date',
  )
})

t.test(
  "escalations run in turn at their time: notify, to a swimlane's pool, to a user, then the system's action advances the process",
  async (t) => {
    const stack = await startDueStack(t)
    const { manager, employee } = stack.users
    await stack.insertLeaveRequest((body) => {
      body.steps.request.escalations = [
        { after: 'PT5M', do: 'notify', note: 'Please finish your request' },
        { after: 'PT10M', do: 'assignToSwimlane', swimlane: 'hr' },
        { after: 'PT20M', do: 'assignToUser', userId: `'${manager.userId}'` },
        { after: 'PT30M', do: 'action' },
      ]
    })
    const session = await stack.startLeave(employee)
    const id = session.context.processInstance.processInstanceId
    const jobs = await stack.escalationJobs(id)
    t.same(
      jobs.map((job) => [job.status, job.dueAt.toISOString(), job.payload.position]),
      [
        ['waiting', '2026-03-02T08:35:00.000Z', 0],
        ['waiting', '2026-03-02T08:40:00.000Z', 1],
        ['waiting', '2026-03-02T08:50:00.000Z', 2],
        ['waiting', '2026-03-02T09:00:00.000Z', 3],
      ],
      "one job per escalation, due `after` the task's creation, stored with the start",
    )
    const escalated = (count: number) =>
      stack.advanceUntil(
        0,
        () => stack.activities(id, 'escalated'),
        (list) => list.length >= count,
      )

    stack.clock.advance(4 * MINUTE)
    await stack.batchWorkerCaughtUp()
    t.same(await stack.activities(id, 'escalated'), [], 'nothing runs before its time')

    stack.clock.advance(MINUTE)
    const first = await escalated(1)
    t.match(first, [
      {
        type: 'escalated',
        userId: 'system',
        userName: 'System',
        stepId: 'request',
        details: { position: 0, do: 'notify', after: 'PT5M', note: 'Please finish your request' },
      },
    ])
    t.equal((await stack.notification(id))?.eventType, 'Escalated', 'an Escalated notification')
    let task = openTask(await stack.context(id), 'request')
    t.same([task?.userId, task?.swimlane, task?.escalated], [employee.userId, 'employee', [0]], 'notify leaves the task where it was')

    stack.clock.advance(5 * MINUTE)
    await escalated(2)
    task = openTask(await stack.context(id), 'request')
    t.same(
      [task?.userId, task?.userName, task?.swimlane, task?.escalated],
      [undefined, undefined, 'hr', [0, 1]],
      'the task is in the hr pool, nobody assigned',
    )

    stack.clock.advance(10 * MINUTE)
    const third = await escalated(3)
    t.match(third[2], { details: { do: 'assignToUser', targetUserId: manager.userId } })
    const afterAssign = await stack.context(id)
    task = openTask(afterAssign, 'request')
    t.same([task?.userId, task?.userName], [manager.userId, 'Max Manager'], 'assigned to the user the expression gives')
    t.ok(afterAssign.processInstance.contributorUsers.includes(manager.userId), 'the assignee keeps seeing the process')

    stack.clock.advance(10 * MINUTE)
    await escalated(4)
    const ended = await stack.context(id)
    const request = ended.processInstance.tasks.find((candidate) => candidate.stepId === 'request')
    t.match(request, { status: 'completed', actionType: 'complete', completedBy: 'system' }, 'the system completed the task')
    t.ok(openTask(ended, 'approve'), "the process went on to the approval, as after a user's completion")
    t.match(
      await stack.activities(id, 'complete'),
      [{ userId: 'system', stepId: 'request', details: { escalation: 3 } }],
      "the action's own activity",
    )
    t.equal((await stack.notification(id))?.eventType, 'Escalated')
    const done = await waitUntil(
      () => stack.escalationJobs(id),
      (list) => list.every((job) => job.status === 'done'),
    )
    t.same(
      done.map((job) => job.status),
      ['done', 'done', 'done', 'done'],
    )
  },
)

t.test('an escalation does not run when its task ended first: the end of the task removes its job', async (t) => {
  const stack = await startDueStack(t)
  await stack.insertLeaveRequest((body) => {
    body.steps.request.escalations = [{ after: 'PT5M', do: 'action', actionType: 'cancel' }]
  })
  const session = await stack.startLeave(stack.users.employee)
  const instance = session.context.processInstance
  t.match(await stack.escalationJobs(instance.processInstanceId), [{ status: 'waiting', scheduleKey: /^escalation:/ }])
  const completed = await completeLeaveTask(stack, stack.users.employee, session)
  t.equal(completed.status, 200)
  t.same(await stack.escalationJobs(instance.processInstanceId), [], 'no job is left waiting for days for a task that has ended')
  stack.clock.advance(10 * MINUTE)
  await stack.batchWorkerCaughtUp()
  t.same(await stack.activities(instance.processInstanceId, 'escalated'), [])
  const stored = await stack.context(instance.processInstanceId)
  t.equal(stored.processStatus, 'running', 'the cancel escalation did not end the process')
  t.ok(openTask(stored, 'approve'))
})

t.test('an escalation of a suspended instance waits until the instance is resumed', async (t) => {
  const stack = await startDueStack(t)
  await stack.insertLeaveRequest((body) => {
    body.steps.request.escalations = [{ after: 'PT5M', do: 'notify' }]
  })
  const id = (await stack.startLeave(stack.users.employee)).context.processInstance.processInstanceId
  const contexts = stack.store.collection<StoredContext>(Collections.contexts)
  const setStatus = (status: string) =>
    contexts.updateOne({ _id: id }, { $set: { processStatus: status, 'processInstance.processStatus': status } })
  await setStatus('suspended')
  const deferred = await stack.advanceUntil(
    5 * MINUTE,
    () => stack.escalationJobs(id),
    ([job]) => job?.status === 'waiting' && job.dueAt.toISOString() > '2026-03-02T08:35:00.000Z',
  )
  t.match(deferred, [{ status: 'waiting', tryCount: 0 }], 'the job waits without counting a failed try')
  t.equal(deferred[0]?.dueAt.toISOString(), '2026-03-02T08:36:00.000Z', 'it looks again a minute later')
  // Looked at again a minute later, still suspended: deferred once more.
  const again = await stack.advanceUntil(
    MINUTE,
    () => stack.escalationJobs(id),
    ([job]) => job?.dueAt.toISOString() === '2026-03-02T08:37:00.000Z',
  )
  t.match(again, [{ status: 'waiting', tryCount: 0 }])
  t.same(await stack.activities(id, 'escalated'), [], 'still suspended: still waiting')
  await setStatus('running')
  const ran = await stack.advanceUntil(
    MINUTE,
    () => stack.activities(id, 'escalated'),
    (list) => list.length > 0,
  )
  t.equal(ran.length, 1, 'resumed: the escalation ran')
})

t.test('an escalation job that runs again (a lapsed lease) does not escalate a second time', async (t) => {
  const stack = await startDueStack(t)
  await stack.insertLeaveRequest((body) => {
    body.steps.request.escalations = [{ after: 'PT1M', do: 'assignToSwimlane', swimlane: 'hr' }]
  })
  const id = (await stack.startLeave(stack.users.employee)).context.processInstance.processInstanceId
  await stack.advanceUntil(
    MINUTE,
    () => stack.escalationJobs(id),
    ([job]) => job?.status === 'done',
  )
  const jobs = stack.store.collection<StoredBatchJob>(Collections.batchJobs)
  await jobs.updateMany({ kind: 'escalation' }, { $set: { status: 'waiting', dueAt: stack.clock.now() }, $unset: { finishedAt: '' } })
  await stack.advanceUntil(
    1,
    () => stack.escalationJobs(id),
    ([job]) => job?.status === 'done',
  )
  t.equal((await stack.activities(id, 'escalated')).length, 1, 'one escalated activity')
  t.same(openTask(await stack.context(id), 'request')?.escalated, [0])
})

t.test('a model with a malformed dueIn or escalation is refused at insert with the path of the fault, and nothing is stored', async (t) => {
  const stack = await startDueStack(t)
  const cases: Array<[edit: (body: EditableModelBody) => void, fault: RegExp]> = [
    [(body) => void (body.steps.request.dueIn = 'three days'), /modelBody\.steps\.request\.dueIn: must be an ISO-8601 duration/],
    [
      (body) => Object.assign(body.steps.request, { dueIn: 'P1D', dueDate: "'2026-04-01'" }),
      /modelBody\.steps\.request\.dueDate: is not allowed with dueIn/,
    ],
    [
      (body) => void (body.steps.request.escalations = [{ after: 'P1D', do: 'assignToSwimlane', swimlane: 'board' }]),
      /modelBody\.steps\.request\.escalations\[0\]\.swimlane: names swimlane "board"/,
    ],
    [
      (body) => void (body.steps.request.escalations = [{ after: 'soon', do: 'notify' }]),
      /modelBody\.steps\.request\.escalations\[0\]\.after: must be an ISO-8601 duration/,
    ],
    [
      (body) => void (body.steps.hrReview.escalations = [{ after: 'P1D', do: 'action', actionType: 'cancel' }]),
      /modelBody\.steps\.hrReview\.escalations\[0\]\.actionType: takes action "cancel"/,
    ],
    [
      (body) => void (body.steps.request.escalations = [{ after: 'P1D', do: 'assignToUser' }]),
      /escalations\[0\]\.userId: is required for do "assignToUser"/,
    ],
  ]
  for (const [edit, fault] of cases) {
    const answer = await stack.insertLeaveRequest(edit)
    t.equal(answer.status, 400)
    t.match(answer.body, { status: 'customerror', error: { code: 'fm3010', message: fault } })
  }
  const versions = await stack.store
    .collection<StoredModel>(Collections.models)
    .find({ ...HR, modelID: 'leave-request' })
    .toArray()
  t.same(
    versions.map((model) => model.version),
    [1],
    'only the version deployed before',
  )
})

t.test('two engines over one store run each escalation exactly once', async (t) => {
  const stack = await startDueStack(t, { engines: 2 })
  await stack.insertLeaveRequest((body) => {
    body.steps.request.escalations = [
      { after: 'PT1M', do: 'notify' },
      { after: 'PT2M', do: 'assignToSwimlane', swimlane: 'hr' },
    ]
  })
  const ids: string[] = []
  for (let index = 0; index < 12; index++)
    ids.push((await stack.startLeave(stack.users.employee)).context.processInstance.processInstanceId)
  const jobs = await stack.advanceUntil(
    3 * MINUTE,
    () => stack.escalationJobs(),
    (list) => list.length === 24 && list.every((job) => job.status === 'done'),
  )
  t.equal(jobs.filter((job) => job.status === 'done').length, 24, 'every job done')
  for (const id of ids) {
    const activities = await stack.activities(id, 'escalated')
    t.same(activities.map((activity) => activity.details?.position).sort(), [0, 1], `instance ${id.slice(0, 8)}: each escalation once`)
    t.same(openTask(await stack.context(id), 'request')?.escalated, [0, 1])
  }
})

t.test(
  'an escalation due beyond the horizon gets its job only once it comes within the hour, from one of two engines, and runs at its time',
  async (t) => {
    const stack = await startDueStack(t, { engines: 2 })
    await stack.insertLeaveRequest((body) => {
      body.steps.request.escalations = [{ after: 'PT3H', do: 'notify' }]
    })
    const ids: string[] = []
    for (let index = 0; index < 4; index++)
      ids.push((await stack.startLeave(stack.users.employee)).context.processInstance.processInstanceId)
    t.same(await stack.escalationJobs(), [], 'no job is stored with the start: the escalation is three hours away')
    const first = await stack.context(ids[0] as string)
    t.same(
      first.escalationsDueAt?.map((date) => date.toISOString()),
      ['2026-03-02T11:30:00.000Z'],
      'the instance says when its escalation falls due',
    )

    const stored = await stack.advanceUntil(
      2 * 60 * MINUTE + MINUTE,
      () => stack.escalationJobs(),
      (list) => list.length === ids.length,
    )
    t.same(
      stored.map((job) => [job.status, job.dueAt.toISOString(), job.createdAt.toISOString() >= '2026-03-02T10:30:00.000Z']),
      ids.map(() => ['waiting', '2026-03-02T11:30:00.000Z', true]),
      'each job stored once it came within the hour, due at the escalation time',
    )
    const escalated = await stack.advanceUntil(
      59 * MINUTE,
      () => stack.activities(ids[0] as string, 'escalated'),
      (list) => list.length > 0,
    )
    t.match(escalated, [{ details: { position: 0, do: 'notify' } }], 'it ran at its time')
    const done = await waitUntil(
      () => stack.escalationJobs(),
      (list) => list.length === ids.length && list.every((job) => job.status === 'done'),
    )
    t.equal(done.length, ids.length, 'one job per escalation, though both engines looked for them')
    for (const id of ids) t.same((await stack.context(id)).escalationsDueAt, [], 'nothing left to escalate')
  },
)

t.test('a task that ends before its escalation comes near never gets a job, and nothing escalates', async (t) => {
  const stack = await startDueStack(t)
  await stack.insertLeaveRequest((body) => {
    body.steps.request.escalations = [{ after: 'PT3H', do: 'action', actionType: 'cancel' }]
  })
  const session = await stack.startLeave(stack.users.employee)
  const ended = session.context.processInstance.processInstanceId
  t.equal((await completeLeaveTask(stack, stack.users.employee, session)).status, 200)
  t.same((await stack.context(ended)).escalationsDueAt, [], 'the ended task has nothing left to escalate')
  // A second request, left open: once its job is stored, the promoter has looked past the first one's time.
  const open = (await stack.startLeave(stack.users.employee)).context.processInstance.processInstanceId
  await stack.advanceUntil(
    3 * 60 * MINUTE,
    () => stack.escalationJobs(open),
    (list) => list.length === 1,
  )
  await stack.batchWorkerCaughtUp()
  t.same(await stack.escalationJobs(ended), [], 'no job for the task that ended')
  t.same(await stack.activities(ended, 'escalated'), [])
  const stored = await stack.context(ended)
  t.equal(stored.processStatus, 'running', 'the cancel escalation did not end the process')
})
