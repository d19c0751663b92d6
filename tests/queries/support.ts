/**
 * Test support for the paged queries (docs/reference/queries.md#paged-queries): the HR example app
 * over one embedded store, an engine on the test's clock, a gateway in front of it, and clients of
 * each query whose answers are checked against the gateway's document.
 */
import type { Test } from 'tap'
import type { IncidentPage, InstanceSummaryPage, MyTaskPage, Session } from '../../openapi/generated/schemas.js'
import { Collections, type StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { type TestClock, testClock } from '../../services/testing/clock.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { startHrStack } from '../../services/testing/hr-stack.js'
import { createTestUser } from '../../services/testing/users.js'
import { type Answer, completeTask, HR, type HrUsers, type WorkflowClient } from '../../services/testing/workflow.js'
import { setConstant } from '../../services/testing/models.js'

export { HR }

export const T0 = '2026-05-04T09:00:00.000Z'

export interface QueryStack {
  store: Store
  clock: TestClock
  users: HrUsers & { system: StoredUser; otherOrganization: StoredUser }
  /** Through the gateway. */
  client: WorkflowClient
  /** Starts a leave request as `user` a minute after the previous thing happened. */
  startLeave(user: StoredUser, days?: number): Promise<Session>
  /** Completes the session's task as `user` with `actionType` (default complete). */
  complete(user: StoredUser, session: Session, actionType?: 'complete' | 'cancel'): Promise<Session>
  /** Opens the session's task form as `user` (which takes its lock when the user may work on it). */
  openForm(user: StoredUser, session: Session): Promise<Session>
  /** The leave request's payroll system online or not (its `updatePayroll` step fails while it is offline). */
  payrollOnline(online: boolean): Promise<void>
  myTasks(user: StoredUser, body?: Record<string, unknown>): Promise<Answer<Envelope<MyTaskPage>>>
  instances(user: StoredUser, body?: Record<string, unknown>): Promise<Answer<Envelope<InstanceSummaryPage>>>
  incidents(user: StoredUser, body?: Record<string, unknown>): Promise<Answer<Envelope<IncidentPage>>>
}

const MINUTE = 60_000

export async function startQueryStack(t: Test): Promise<QueryStack> {
  const clock = testClock(T0)
  const {
    store,
    users: hrUsers,
    client,
  } = await startHrStack(t, {
    clock: clock.now,
    // The queries' tests move the clock by weeks: without the example's 3-day deadline on the approval,
    // which would move approvals to HR's pool meanwhile (tests/waits/timers.test.ts proves that one).
    prepare: async (store) => {
      const withoutDeadline = await store
        .collection(Collections.models)
        .updateOne({ ...HR, modelID: 'leave-request', live: true }, { $unset: { 'modelBody.steps.approve.escalations': '' } })
      if (withoutDeadline.modifiedCount !== 1) throw new Error('the leave request example has no deadline on its approval to take out')
    },
  })
  const users = {
    ...hrUsers,
    // The same app id in another organization: another tenant.
    otherOrganization: await createTestUser(store, {
      appId: HR.appId,
      organizationId: 'globex',
      fullName: 'Gus Globex',
      roles: ['admin'],
      swimlanes: ['employee', 'manager'],
    }),
  }
  const query =
    <Page>(operationId: string, path: string) =>
    (user: StoredUser, body: Record<string, unknown> = {}) =>
      client.call<Envelope<Page>>(operationId, 'POST', path, { user: user.userId, body: { ...HR, ...body } })

  return {
    store,
    clock,
    users,
    client,
    async startLeave(user, days = 3) {
      clock.advance(MINUTE)
      const answer = await client.call<Envelope<Session>>('openContext', 'POST', '/context', {
        user: user.userId,
        body: { ...HR, processId: 'leave-request', input: { days, reason: 'Trip' } },
      })
      if (answer.status !== 200) throw new Error(`the leave request did not start: ${JSON.stringify(answer.body)}`)
      return answer.body.data
    },
    async complete(user, session, actionType = 'complete') {
      clock.advance(MINUTE)
      const answer = await completeTask<Envelope<Session>>(client, user, session, { actionType })
      if (answer.status !== 200) throw new Error(`the task did not end: ${JSON.stringify(answer.body)}`)
      return answer.body.data
    },
    async openForm(user, session) {
      const { processId, processInstanceId } = session.context.processInstance
      const answer = await client.call<Envelope<Session>>('openContext', 'POST', '/context', {
        user: user.userId,
        body: { ...HR, processId, processInstanceId, skipToForm: true },
      })
      if (answer.status !== 200) throw new Error(`the form did not open: ${JSON.stringify(answer.body)}`)
      return answer.body.data
    },
    async payrollOnline(online) {
      await setConstant(store, HR, 'payrollOnline', online ? 'yes' : 'no')
    },
    myTasks: query<MyTaskPage>('queryMyTasks', '/query/myTasks'),
    instances: query<InstanceSummaryPage>('queryInstances', '/query/instances'),
    incidents: query<IncidentPage>('queryIncidents', '/query/incidents'),
  }
}

/** Every page of a query, following `nextCursor`, as the pages' items. */
export async function allPages<T>(
  read: (cursor: string | undefined) => Promise<Answer<Envelope<{ items: T[]; nextCursor: string | null }>>>,
): Promise<T[][]> {
  const pages: T[][] = []
  let cursor: string | undefined
  for (let page = 0; page < 100; page++) {
    const answer = await read(cursor)
    if (answer.status !== 200) throw new Error(`a page failed: ${JSON.stringify(answer.body)}`)
    pages.push(answer.body.data.items)
    if (answer.body.data.nextCursor === null) return pages
    cursor = answer.body.data.nextCursor
  }
  throw new Error('more than 100 pages')
}
