/**
 * `POST /query/myTasks` through the gateway: the caller's assigned tasks and the pools of their
 * swimlanes, newest first, paged without repeats or gaps, each filter, the lock holder, tenants,
 * bad input.
 */
import t from 'tap'
import type { MyTask, Session } from '../../openapi/generated/schemas.js'
import { allPages, startQueryStack, T0 } from './support.js'

const idOf = (session: Session) => session.context.processInstance.processInstanceId
const DAY = 86_400_000
const taskKeys = (tasks: MyTask[]) => tasks.map((task) => `${task.processInstanceId} ${task.stepId}`)

t.test('the caller sees the tasks assigned to them and those in their swimlanes, newest first, with the lock holder', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, colleague, manager, hr, otherOrganization, stranger } = stack.users
  const first = await stack.startLeave(employee)
  const second = await stack.startLeave(employee)
  const theirs = await stack.startLeave(colleague)
  const submitted = await stack.complete(employee, first)

  const mine = await stack.myTasks(employee)
  t.equal(mine.status, 200)
  t.same(taskKeys(mine.body.data.items), [`${idOf(second)} request`], 'the open task assigned to the employee; not the colleague’s')
  t.same(mine.body.data.nextCursor, null)
  const task = mine.body.data.items[0]
  t.match(task, {
    processId: 'leave-request',
    businessKey: second.context.processInstance.businessKey,
    name: 'Request leave',
    swimlane: 'employee',
    userId: employee.userId,
    createdAt: new Date(Date.parse(T0) + 2 * 60_000).toISOString(),
    dueDate: null,
  })
  t.same(task?.lock, { userId: employee.userId, expiresAt: task?.lock?.expiresAt }, 'the start locked the task for its initiator')

  let pool = await stack.myTasks(manager)
  t.same(taskKeys(pool.body.data.items), [`${idOf(submitted)} approve`], 'the unassigned task in the manager pool')
  t.equal(pool.body.data.items[0]?.userId, undefined)
  t.equal(pool.body.data.items[0]?.lock, null, 'nobody holds its lock yet')
  await stack.openForm(manager, submitted)
  pool = await stack.myTasks(manager)
  t.equal(pool.body.data.items[0]?.lock?.userId, manager.userId, 'opening the form took the lock: the holder is shown')
  t.same((await stack.myTasks(manager, { assignedToMe: true })).body.data.items, [], 'assignedToMe: the pool task is not assigned')
  t.same(taskKeys((await stack.myTasks(manager, { swimlane: 'manager' })).body.data.items), [`${idOf(submitted)} approve`])
  t.same((await stack.myTasks(manager, { swimlane: 'hr' })).body.data.items, [], 'a swimlane the caller is not in gives nothing')
  t.same((await stack.myTasks(hr)).body.data.items, [], 'another swimlane’s member sees none of it')
  t.same((await stack.myTasks(manager, { processId: 'purchase' })).body.data.items, [], 'processId filters')
  t.same(taskKeys((await stack.myTasks(colleague, { processId: 'leave-request' })).body.data.items), [`${idOf(theirs)} request`])

  t.same((await stack.myTasks(otherOrganization)).body.data.items, [], 'another organization with the same app id sees nothing')
  t.same((await stack.myTasks(stranger, { appId: 'sales' })).body.data.items, [], 'another app sees nothing')
  t.same((await stack.myTasks(manager, { appId: 'sales' })).body.data.items, [], 'naming another app covers nothing')
})

t.test('pages follow each other without repeats or gaps, also while tasks are taken meanwhile', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, manager } = stack.users
  const sessions: Session[] = []
  for (let index = 0; index < 7; index++) {
    // Weeks apart and more, so a page is read from several windows back in time (queries/repository.ts).
    stack.clock.advance(index * index * 3 * DAY)
    sessions.push(await stack.complete(employee, await stack.startLeave(employee)))
  }
  const whole = (await stack.myTasks(manager, { limit: 200 })).body.data
  t.equal(whole.items.length, 7)
  t.same(
    whole.items.map((task) => task.processInstanceId),
    sessions.map(idOf).reverse(),
    'newest first',
  )
  for (const limit of [1, 2, 3, 7]) {
    const pages = await allPages((cursor) => stack.myTasks(manager, { limit, ...(cursor ? { cursor } : {}) }))
    t.same(pages.flat(), whole.items, `limit ${limit}: the pages together are the whole list, in order`)
    t.ok(
      pages.every((page) => page.length <= limit),
      `limit ${limit}: no page is longer`,
    )
  }
  const firstPage = (await stack.myTasks(manager, { limit: 3 })).body.data
  // One of the next page's tasks is completed: the rest still follow where they were.
  const taken = sessions[2] as Session
  await stack.complete(manager, await stack.openForm(manager, taken))
  const next = await stack.myTasks(manager, { limit: 3, cursor: firstPage.nextCursor })
  t.same(
    next.body.data.items.map((task) => task.processInstanceId),
    [sessions[3], sessions[1], sessions[0]].map((session) => idOf(session as Session)),
    'the next page goes on after the last task given',
  )
})

t.test('bad input is a clear 400 and a caller without identity 401', async (t) => {
  const stack = await startQueryStack(t)
  const { manager } = stack.users
  for (const cursor of [
    'nonsense',
    Buffer.from('["x","y"]').toString('base64url'),
    Buffer.from('["not a date","a","b","c"]').toString('base64url'),
  ]) {
    t.match(await stack.myTasks(manager, { cursor }), { status: 400, body: { status: 'customerror', error: { code: 'wm4000' } } }, cursor)
  }
  t.match(await stack.myTasks(manager, { limit: 0 }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.myTasks(manager, { limit: 201 }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.myTasks(manager, { assignedToMe: 'yes' }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.client.call('queryMyTasks', 'POST', '/query/myTasks', { body: {} }), { status: 401 })
})
