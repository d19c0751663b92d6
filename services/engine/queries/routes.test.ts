import t from 'tap'
import type { ActiveProcessInfo, ContextAndActivity, ProcessInfo, Session } from '../../../openapi/generated/schemas.js'
import { completeTask, HR, startHrEngine, startLeaveRequest } from '../../testing/workflow.js'

t.test('queries answer the running / recently updated instances of a process that the user may see', async (t) => {
  const engine = await startHrEngine(t)
  // The outsider works in no swimlane: they see what they started, not every open employee task.
  const { outsider, employee, admin, stranger } = engine.users
  const mine = (await startLeaveRequest(engine, outsider)).body
  const theirs = (await startLeaveRequest(engine, employee)).body
  const cancelled = (await startLeaveRequest(engine, outsider)).body
  await completeTask(engine, outsider, cancelled, { actionType: 'cancel' })
  const id = (session: Session) => session.context.processInstance.processInstanceId

  const active = await engine.call<ActiveProcessInfo[]>('queryActiveProcesses', 'POST', '/query/activeProcessIds', {
    user: outsider.userId,
    body: { ...HR, processId: 'leave-request' },
  })
  t.same(
    active.body.map((info) => info.processInstanceId),
    [id(mine)],
    'running only, and only what the user may see',
  )
  t.match(active.body[0], {
    processId: 'leave-request',
    processStatus: 'running',
    tasks: [{ stepId: 'request', name: 'Request leave', userId: outsider.userId, swimlane: 'employee' }],
  })
  /** The ids a query answers the user. */
  const idsOf = async (operation: string, path: string, user: string, body: object): Promise<Set<string>> => {
    const answer = await engine.call<ProcessInfo[]>(operation, 'POST', path, { user, body })
    return new Set(answer.body.map((info) => info.processInstanceId))
  }
  t.same(
    await idsOf('queryActiveProcesses', '/query/activeProcessIds', admin.userId, { ...HR, processId: 'leave-request' }),
    new Set([id(mine), id(theirs)]),
    "an admin sees the tenant's running instances",
  )
  const foreign = await engine.call<ActiveProcessInfo[]>('queryActiveProcesses', 'POST', '/query/activeProcessIds', {
    user: stranger.userId,
    body: { appId: 'hr', processId: 'leave-request' },
  })
  t.same(foreign.body, [], 'another tenant sees nothing')

  const from = new Date(Date.now() - 60_000).toISOString()
  const updated = await engine.call<ProcessInfo[]>('queryProcessesUpdatedBetween', 'POST', '/query/processIdsUpdatedBetween', {
    user: admin.userId,
    body: { ...HR, processId: 'leave-request', date1: from },
  })
  t.equal(updated.body.length, 3, 'date2 defaults to now; finished instances count too')
  t.ok(
    updated.body.every((info, index) => index === 0 || info.lastUpdate <= updated.body[index - 1]!.lastUpdate),
    'newest update first',
  )
  const updatedBetween = ['queryProcessesUpdatedBetween', '/query/processIdsUpdatedBetween'] as const
  t.same(
    await idsOf(...updatedBetween, outsider.userId, { ...HR, processId: 'leave-request', date1: from }),
    new Set([id(mine), id(cancelled)]),
    'a user who is no admin sees only the instances they may see, ended ones included',
  )
  t.same(
    await idsOf(...updatedBetween, stranger.userId, { appId: 'hr', processId: 'leave-request', date1: from }),
    new Set(),
    'another tenant sees nothing',
  )
  const past = await engine.call<ProcessInfo[]>('queryProcessesUpdatedBetween', 'POST', '/query/processIdsUpdatedBetween', {
    user: admin.userId,
    body: { ...HR, processId: 'leave-request', date1: '2020-01-01T00:00:00Z', date2: '2020-12-31T00:00:00Z' },
  })
  t.same(past.body, [])
  t.match(
    await engine.call('queryProcessesUpdatedBetween', 'POST', '/query/processIdsUpdatedBetween', {
      user: admin.userId,
      body: { ...HR, processId: 'leave-request', date1: '2021-01-01T00:00:00Z', date2: '2020-01-01T00:00:00Z' },
    }),
    { status: 400, body: { code: 'wm4000' } },
    'date1 after date2',
  )
  t.match(
    await engine.call('queryProcessesUpdatedBetween', 'POST', '/query/processIdsUpdatedBetween', {
      user: admin.userId,
      body: { ...HR, processId: 'leave-request' },
    }),
    { status: 400, body: { code: 'wm4000' } },
  )
  t.match(await engine.call('queryActiveProcesses', 'POST', '/query/activeProcessIds', { body: { ...HR, processId: 'leave-request' } }), {
    status: 401,
  })
})

t.test(
  'context and activity per requested instance, in request order; null for one not found, not visible or of another key',
  async (t) => {
    const engine = await startHrEngine(t)
    const { outsider, employee } = engine.users
    const mine = (await startLeaveRequest(engine, outsider)).body.context.processInstance
    const theirs = (await startLeaveRequest(engine, employee)).body.context.processInstance
    const answer = await engine.call<ContextAndActivity[]>(
      'queryProcessInstanceContextAndActivity',
      'POST',
      '/query/processInstanceContextAndActivity',
      {
        user: outsider.userId,
        body: {
          ...HR,
          processId: 'leave-request',
          processInstances: [
            { processInstanceId: theirs.processInstanceId, businessKey: theirs.businessKey },
            { processInstanceId: mine.processInstanceId, businessKey: mine.businessKey },
            { processInstanceId: mine.processInstanceId, businessKey: 'LR-wrong' },
            { processInstanceId: 'missing', businessKey: 'x' },
          ],
        },
      },
    )
    t.same(
      answer.body.map((entry) => entry.context === null),
      [true, false, true, true],
    )
    const found = answer.body[1]!
    t.same(found.context?.dataInstance, { days: 3, reason: 'Family visit' })
    t.equal(found.context?.processInstance.processInstanceId, mine.processInstanceId)
    t.match(found.activity, [{ type: 'start' }])
    t.same(answer.body[0]!.activity, [], 'nothing of an instance the user may not see')
  },
)
