/**
 * Test support for due dates, escalations, overdue tasks and migration: the HR example app over one
 * embedded store, one or more engines on the test's clock (batch poll every 20 ms), a gateway in
 * front of the first, and a client whose answers are checked against the gateway's document.
 */
import type { EditableModelBody } from '../../services/testing/models.js'
import type { Test } from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import type { StoredActivity, StoredBatchJob, StoredContext, StoredNotification, StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { batchWorkerCaughtUp } from '../../services/testing/batch-jobs.js'
import { type TestClock, testClock } from '../../services/testing/clock.js'
import type { Envelope } from '../../services/testing/gateway.js'
import { startHrStack } from '../../services/testing/hr-stack.js'
import { storedActivities, storedBatchJobs, storedInstance, notificationRecordOf } from '../../services/testing/instance-store.js'
import { insertModelRequest } from '../../services/testing/models.js'
import { waitUntil } from '../../services/testing/wait.js'
import { type Answer, type CompleteOptions, completeTask, HR, type HrUsers, type WorkflowClient } from '../../services/testing/workflow.js'

export { HR }

/** Half past eight on a Monday: the engines' clock starts here and the tests move it. */
export const T0 = '2026-03-02T08:30:00.000Z'

export interface DueStack {
  store: Store
  clock: TestClock
  users: HrUsers & { system: StoredUser }
  /** Through the gateway. */
  client: WorkflowClient
  engineUrls: string[]
  /** Inserts a live version of the leave request through the gateway, its body changed by `edit`. */
  insertLeaveRequest(edit: (body: EditableModelBody) => void): Promise<Answer<Envelope<string>>>
  /** Starts a leave request as `user` through the gateway; answers its session. */
  startLeave(user: StoredUser, days?: number): Promise<Session>
  context(processInstanceId: string): Promise<StoredContext>
  activities(processInstanceId: string, type?: string): Promise<StoredActivity[]>
  notification(processInstanceId: string): Promise<StoredNotification | null>
  escalationJobs(processInstanceId?: string): Promise<StoredBatchJob[]>
  /** Moves the clock and waits until `done` holds of what `read` gives (the engines poll on their own). */
  advanceUntil<T>(ms: number, read: () => Promise<T>, done: (value: T) => boolean): Promise<T>
  /**
   * Waits until a batch worker has looked for due jobs at the clock's present time: the sign that whatever
   * is not run by then is not due, with no fixed wait. It enqueues an escalation of no instance, due now,
   * and waits until it ran (it finds no task, and is done at once).
   */
  batchWorkerCaughtUp(): Promise<void>
}

export async function startDueStack(t: Test, options: { engines?: number } = {}): Promise<DueStack> {
  const clock = testClock(T0)
  const { store, users, engines, client } = await startHrStack(t, {
    ...options,
    clock: clock.now,
    engineConfig: { batchPollMs: 20, batchBackoffMs: 20 },
  })
  return {
    store,
    clock,
    users,
    client,
    engineUrls: engines.map((engine) => engine.url),
    insertLeaveRequest: (edit) =>
      client.call<Envelope<string>>('insertModel', 'POST', '/model/insertModel', {
        body: insertModelRequest('leave-request', {
          ...HR,
          edit: (body: EditableModelBody) => {
            // Without the example's own deadline on the approval: each test sets the escalations it is about.
            delete body.steps.approve.escalations
            edit(body)
          },
        }),
      }),
    async startLeave(user, days = 3) {
      const answer = await client.call<Envelope<Session>>('openContext', 'POST', '/context', {
        user: user.userId,
        body: { ...HR, processId: 'leave-request', input: { days, reason: 'Trip' } },
      })
      if (answer.status !== 200) throw new Error(`the leave request did not start: ${JSON.stringify(answer.body)}`)
      return answer.body.data
    },
    context: (processInstanceId) => storedInstance(store, processInstanceId),
    activities: (processInstanceId, type) => storedActivities(store, processInstanceId, type),
    notification: (processInstanceId) => notificationRecordOf(store, processInstanceId),
    escalationJobs: (processInstanceId) => storedBatchJobs(store, 'escalation', processInstanceId, 'dueAt'),
    async advanceUntil(ms, read, done) {
      clock.advance(ms)
      return waitUntil(read, done, 10_000)
    },
    batchWorkerCaughtUp() {
      const now = clock.now()
      const payload = { processInstanceId: `no-instance-${now.toISOString()}`, taskId: 'no-task', stepId: 'request', position: 0 }
      return batchWorkerCaughtUp(store, now, { kind: 'escalation', payload })
    },
  }
}

/** Completes the task a session opened (or acts on it as `options` say), as `user`, through the gateway; answers the gateway's answer. */
export function completeLeaveTask(stack: DueStack, user: { userId: string }, session: Session, options: CompleteOptions = {}) {
  return completeTask<Envelope<Session>>(stack.client, user, session, options)
}
