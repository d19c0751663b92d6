/**
 * `POST /query/instances` and `POST /query/incidents` through the gateway: what each caller may see,
 * every filter, paging without repeats or gaps, incidents of failed threads and their retries,
 * tenants, bad input.
 */
import t from 'tap'
import type { InstanceSummary, Session } from '../../openapi/generated/schemas.js'
import { allPages, HR, startQueryStack, T0 } from './support.js'

const idOf = (session: Session) => session.context.processInstance.processInstanceId
const ids = (items: InstanceSummary[]) => items.map((item) => item.processInstanceId)
const MINUTE = 60_000
const DAY = 86_400_000
const at = (minutes: number) => new Date(Date.parse(T0) + minutes * MINUTE).toISOString()

t.test('instances: an admin sees the tenant’s, a user what they are authorized on; each filter; pages', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, colleague, manager, outsider, admin, otherOrganization, system } = stack.users
  const first = await stack.startLeave(employee) // 09:01
  const second = await stack.startLeave(colleague) // 09:02
  const third = await stack.startLeave(outsider) // 09:03
  const cancelled = await stack.complete(outsider, await stack.startLeave(outsider), 'cancel') // started 09:04
  const submitted = await stack.complete(employee, await stack.startLeave(employee)) // started 09:06

  const all = await stack.instances(admin)
  t.equal(all.status, 200)
  t.same(
    ids(all.body.data.items),
    [submitted, cancelled, third, second, first].map(idOf),
    'an admin sees every instance, newest start first',
  )
  t.match(all.body.data.items.at(-1), {
    processId: 'leave-request',
    processName: first.context.processInstance.processName,
    modelVersion: 1,
    businessKey: first.context.processInstance.businessKey,
    processStatus: 'running',
    processStart: at(1),
    initiator: employee.userId,
    openTaskCount: 1,
    hasIncident: false,
  })
  t.match(all.body.data.items[1], { processStatus: 'cancelled', openTaskCount: 0 })
  t.same((await stack.instances(system)).body.data.items, [], 'a system user sees what it is authorized on, as on GET /process: none here')

  t.same(ids((await stack.instances(outsider)).body.data.items), [cancelled, third].map(idOf), 'a user sees what they started')
  t.same(
    ids((await stack.instances(manager)).body.data.items),
    [submitted].map(idOf),
    'a swimlane member sees the instances with an open task in their swimlane',
  )
  t.same(
    ids((await stack.instances(colleague)).body.data.items),
    [third, second, first].map(idOf),
    'a member of a swimlane sees the instances with an open task there, assigned or not (as GET /process decides)',
  )

  t.same(ids((await stack.instances(admin, { status: 'cancelled' })).body.data.items), [idOf(cancelled)], 'status')
  t.same(ids((await stack.instances(admin, { processId: 'purchase' })).body.data.items), [], 'processId')
  const key = second.context.processInstance.businessKey
  t.same(ids((await stack.instances(admin, { businessKey: key })).body.data.items), [idOf(second)], 'businessKey: a whole key')
  t.same(
    ids((await stack.instances(admin, { businessKey: 'LR-' })).body.data.items).length,
    5,
    'businessKey: a prefix (every leave request starts with LR-)',
  )
  t.same((await stack.instances(admin, { businessKey: 'PO-' })).body.data.items, [], 'businessKey: another prefix')
  t.same((await stack.instances(admin, { businessKey: 'L.' })).body.data.items, [], 'businessKey: a prefix is text, not a pattern')
  t.same((await stack.instances(admin, { businessKey: 'LR-\u{10FFFF}' })).body.data.items, [], 'businessKey: the last character there is')
  t.same(
    ids((await stack.instances(admin, { startedAfter: at(2), startedBefore: at(4) })).body.data.items),
    [cancelled, third, second].map(idOf),
    'startedAfter and startedBefore are inclusive bounds',
  )
  t.same(ids((await stack.instances(admin, { startedAfter: at(5) })).body.data.items), [idOf(submitted)])
  t.same((await stack.instances(admin, { hasIncident: true })).body.data.items, [], 'hasIncident: none yet')
  t.equal((await stack.instances(admin, { hasIncident: false })).body.data.items.length, 5)

  for (const limit of [1, 2, 4]) {
    const pages = await allPages((cursor) => stack.instances(admin, { limit, ...(cursor ? { cursor } : {}) }))
    t.same(pages.flat(), all.body.data.items, `limit ${limit}: the pages together are the whole list, in order`)
  }
  const filtered = await allPages((cursor) => stack.instances(outsider, { limit: 1, ...(cursor ? { cursor } : {}) }))
  t.same(ids(filtered.flat()), [cancelled, third].map(idOf), 'a user’s pages hold only what they see')
  const firstPage = (await stack.instances(admin, { limit: 2 })).body.data
  await stack.startLeave(employee) // starts after every listed one: the next page is not moved by it
  t.same(
    ids((await stack.instances(admin, { limit: 2, cursor: firstPage.nextCursor })).body.data.items),
    [third, second].map(idOf),
    'a start meanwhile changes nothing of the following pages',
  )

  t.same((await stack.instances(otherOrganization)).body.data.items, [], 'another organization with the same app id sees nothing')
  t.same((await stack.instances(admin, { appId: 'sales' })).body.data.items, [], 'naming another app covers nothing')
  t.match(await stack.instances(admin, { startedAfter: at(5), startedBefore: at(1) }), {
    status: 400,
    body: { error: { code: 'wm4000' } },
  })
  t.match(await stack.instances(admin, { startedAfter: 'yesterday' }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.instances(admin, { status: 'sleeping' }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.instances(admin, { cursor: 'bm90IGEgY3Vyc29y' }), { status: 400, body: { error: { code: 'wm4000' } } })
  t.match(await stack.instances(admin, { unknownFilter: 1 }), { status: 200 }, 'unknown body fields are stripped')
})

t.test('instances started years, days and minutes apart page in order, and startedAfter bounds the read', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, admin } = stack.users
  const started: string[] = []
  for (const gap of [0, 3 * DAY, 40 * DAY, 400 * DAY, 5 * 365 * DAY, MINUTE]) {
    stack.clock.advance(gap)
    started.push(idOf(await stack.startLeave(employee)))
  }
  stack.clock.advance(30 * DAY)
  const pages = await allPages((cursor) => stack.instances(admin, { limit: 2, ...(cursor ? { cursor } : {}) }))
  t.same(ids(pages.flat()), [...started].reverse(), 'newest start first, across every window')
  const recent = await stack.instances(admin, { startedAfter: new Date(Date.parse(T0) + 10 * DAY).toISOString() })
  t.same(ids(recent.body.data.items), started.slice(2).reverse(), 'startedAfter')
})

t.test('incidents: failed threads with their error, time and retries, for admins and system users only', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, manager, admin, system, otherOrganization } = stack.users
  await stack.payrollOnline(false)
  const healthy = await stack.complete(employee, await stack.startLeave(employee))
  const failing = await stack.complete(employee, await stack.startLeave(employee))
  const failed = await stack.complete(manager, await stack.openForm(manager, failing)) // fails at 09:05
  t.equal(failed.context.processInstance.processStatus, 'failed')
  const thread = failed.context.processInstance.threads.find((candidate) => candidate.status === 'failed')

  let incidents = await stack.incidents(admin)
  t.equal(incidents.status, 200)
  t.same(incidents.body.data, {
    items: [
      {
        processInstanceId: idOf(failed),
        processId: 'leave-request',
        businessKey: failed.context.processInstance.businessKey,
        processStatus: 'failed',
        threadId: thread?.threadId,
        stepId: 'updatePayroll',
        errorCode: 'PAYROLL_OFFLINE',
        message: 'Payroll system is offline',
        failedAt: at(5),
        retries: 0,
      },
    ],
    nextCursor: null,
  })
  t.same(ids((await stack.instances(admin, { hasIncident: true })).body.data.items), [idOf(failed)], 'the instance has an incident')
  t.same(ids((await stack.instances(admin, { hasIncident: false })).body.data.items), [idOf(healthy)])

  stack.clock.advance(MINUTE)
  const retry = await stack.client.call('retryAction', 'POST', '/action/retry', {
    user: admin.userId,
    body: { ...HR, processInstanceId: idOf(failed), threadId: thread?.threadId },
  })
  t.equal(retry.status, 200)
  incidents = await stack.incidents(system)
  t.match(incidents.body.data.items, [{ threadId: thread?.threadId, retries: 1, failedAt: at(6) }], 'a retry that failed again counts')
  t.same((await stack.incidents(admin, { processId: 'purchase' })).body.data.items, [], 'processId filters')
  t.same((await stack.incidents(otherOrganization)).body.data.items, [], 'another organization with the same app id sees nothing')

  t.match(await stack.incidents(manager), { status: 403, body: { status: 'permissionError', error: { code: 'wm4031' } } })
  t.match(await stack.incidents(admin, { cursor: 'x' }), { status: 400, body: { error: { code: 'wm4000' } } })

  await stack.payrollOnline(true)
  await stack.client.call('retryAction', 'POST', '/action/retry', {
    user: admin.userId,
    body: { ...HR, processInstanceId: idOf(failed), threadId: thread?.threadId },
  })
  t.same((await stack.incidents(admin)).body.data.items, [], 'a successful retry ends the incident')
  t.match((await stack.instances(admin, { hasIncident: true })).body.data.items, [])
})

t.test('incidents of many instances page without repeats or gaps', async (t) => {
  const stack = await startQueryStack(t)
  const { employee, manager, admin } = stack.users
  await stack.payrollOnline(false)
  const failed: string[] = []
  for (let index = 0; index < 5; index++) {
    const submitted = await stack.complete(employee, await stack.startLeave(employee))
    failed.push(idOf(await stack.complete(manager, await stack.openForm(manager, submitted))))
  }
  const pages = await allPages((cursor) => stack.incidents(admin, { limit: 2, ...(cursor ? { cursor } : {}) }))
  t.same(
    pages.map((page) => page.length),
    [2, 2, 1],
  )
  t.same(
    pages.flat().map((incident) => incident.processInstanceId),
    failed.reverse(),
    'newest failure first',
  )
})
