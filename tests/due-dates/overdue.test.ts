import t from 'tap'
import type { OverdueTask, Session } from '../../openapi/generated/schemas.js'
import type { StoredUser } from '../../store/collections.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { completeLeaveTask, HR, startDueStack, type DueStack } from './support.js'

const HOUR = 3_600_000

function overdue(stack: DueStack, user: StoredUser, body: Record<string, unknown> = {}) {
  return stack.client.call<Envelope<OverdueTask[]>>('queryOverdueTasks', 'POST', '/query/overdueTasks', {
    user: user.userId,
    body: { ...HR, ...body },
  })
}

async function complete(stack: DueStack, user: StoredUser, session: Session): Promise<void> {
  const answer = await completeLeaveTask(stack, user, session)
  if (answer.status !== 200) throw new Error(`complete failed: ${JSON.stringify(answer.body)}`)
}

t.test('overdue tasks are the open tasks past their due date that the user may see, oldest due first', async (t) => {
  const stack = await startDueStack(t)
  const { employee, colleague, manager, admin, outsider, stranger } = stack.users
  await stack.insertLeaveRequest((body) => {
    body.steps.request.dueIn = 'PT2H'
    body.steps.approve.dueIn = 'PT45M'
  })
  const first = await stack.startLeave(employee) // 08:30: request due 10:30
  stack.clock.advance(HOUR / 2)
  const second = await stack.startLeave(colleague) // 09:00: request due 11:00
  stack.clock.advance(HOUR / 2)
  const third = await stack.startLeave(employee) // 09:30: request (due 11:30) completed at once, approve due 10:15
  await complete(stack, employee, third)
  stack.clock.advance(5 * 60_000)
  const fourth = await stack.startLeave(employee) // 09:35: request (due 11:35) completed at once, approve due 10:20
  await complete(stack, employee, fourth)
  const ids = (list: OverdueTask[]) => list.map((task) => [task.processInstanceId, task.stepId])
  const idOf = (session: Session) => session.context.processInstance.processInstanceId

  let answer = await overdue(stack, admin)
  t.equal(answer.status, 200)
  t.same(answer.body.data, [], 'nothing is due yet (09:35)')

  stack.clock.set('2026-03-02T10:16:00.000Z')
  t.same(ids((await overdue(stack, admin)).body.data), [[idOf(third), 'approve']], 'at 10:16 only the task due at 10:15')

  stack.clock.set('2026-03-02T11:40:00.000Z')
  answer = await overdue(stack, admin)
  t.same(
    ids(answer.body.data),
    [
      [idOf(third), 'approve'],
      [idOf(fourth), 'approve'],
      [idOf(first), 'request'],
      [idOf(second), 'request'],
    ],
    'an admin sees every overdue open task of the tenant, the oldest due first; the completed requests are not among them',
  )
  t.match(answer.body.data[2], {
    businessKey: first.context.processInstance.businessKey,
    processId: 'leave-request',
    name: 'Request leave',
    dueDate: '2026-03-02T10:30:00.000Z',
    userId: employee.userId,
    swimlane: 'employee',
  })
  t.match(answer.body.data[0], { name: 'Approve leave', dueDate: '2026-03-02T10:15:00.000Z', swimlane: 'manager' })
  t.notOk('userId' in answer.body.data[0]!, 'a pool task has no userId')

  t.same(
    ids((await overdue(stack, employee)).body.data).length,
    4,
    "the employee initiated three and sees the fourth as a member of its open task's swimlane",
  )
  t.same(
    ids((await overdue(stack, colleague)).body.data),
    [
      [idOf(first), 'request'],
      [idOf(second), 'request'],
    ],
    'the colleague sees the instances with an open task in the employee swimlane, not those waiting for a manager',
  )
  t.same(
    (await overdue(stack, manager)).body.data.map((task) => task.stepId),
    ['approve', 'approve'],
    "a manager sees the approvals in their swimlane's pool",
  )
  t.same((await overdue(stack, outsider)).body.data, [], 'a user without a part in any instance sees none')
  t.same((await overdue(stack, stranger)).body.data, [], 'a user of another app sees none')
  t.same((await overdue(stack, admin, { appId: 'sales' })).body.data, [], 'a request naming another app covers nothing')
  t.same((await overdue(stack, admin, { processId: 'purchase' })).body.data, [], 'processId narrows the query')
  t.equal((await overdue(stack, admin, { processId: 'leave-request' })).body.data.length, 4)

  await complete(stack, employee, first)
  t.same(
    ids((await overdue(stack, admin)).body.data),
    [
      [idOf(third), 'approve'],
      [idOf(fourth), 'approve'],
      [idOf(second), 'request'],
    ],
    'the completed request left the list; its approval is due only at 12:25',
  )
})

t.test('the overdue-tasks query refuses a malformed body and an unknown user', async (t) => {
  const stack = await startDueStack(t)
  const bad = await stack.client.call('queryOverdueTasks', 'POST', '/query/overdueTasks', {
    user: stack.users.admin.userId,
    body: { processId: { $ne: '' } },
  })
  t.equal(bad.status, 400)
  const anonymous = await stack.client.call('queryOverdueTasks', 'POST', '/query/overdueTasks', { user: 'nobody', body: {} })
  t.equal(anonymous.status, 401)
})
