/**
 * Test support for waiting threads (timers, messages, child instances): the HR app over one
 * embedded store, one or more engines on the test's clock (batch poll every 20 ms), a gateway in
 * front of the first, and a client whose answers are checked against the gateway's document.
 */
import type { Test } from 'tap'
import type { Envelope } from '../../services/testing/gateway.js'
import type { StoredActivity, StoredBatchJob, StoredContext, StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import type { RunningService } from '../../services/testing/harness.js'
import { batchWorkerCaughtUp } from '../../services/testing/batch-jobs.js'
import { type TestClock, testClock } from '../../services/testing/clock.js'
import { startHrStack } from '../../services/testing/hr-stack.js'
import { storedActivities, storedBatchJobs, storedInstance } from '../../services/testing/instance-store.js'
import { waitUntil } from '../../services/testing/wait.js'
import { type Answer, HR, type HrUsers, type WorkflowClient } from '../../services/testing/workflow.js'
import type { MessageCorrelateResult, ProcessStartResult } from '../../openapi/generated/schemas.js'

export { HR }

export const T0 = '2026-03-02T08:30:00.000Z'
export const HOUR = 3_600_000

export interface WaitStack {
  store: Store
  clock: TestClock
  users: HrUsers & { system: StoredUser }
  client: WorkflowClient
  engines: RunningService[]
  /** Deploys a process model (live) through the gateway. */
  deploy(processId: string, modelBody: Record<string, unknown>): Promise<void>
  /** Starts an instance through the gateway as `user` (default the employee); answers its id. */
  start(processId: string, input?: Record<string, unknown>, user?: StoredUser): Promise<string>
  correlate(
    body: Record<string, unknown>,
    options?: { user?: StoredUser; headers?: Record<string, string> },
  ): Promise<Answer<Envelope<MessageCorrelateResult>>>
  context(processInstanceId: string): Promise<StoredContext>
  activities(processInstanceId: string, type?: string): Promise<StoredActivity[]>
  jobs(kind: StoredBatchJob['kind'], processInstanceId?: string): Promise<StoredBatchJob[]>
  /** Waits until what `read` gives satisfies `done` (the engines' workers poll on their own). */
  until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T>
  /** Waits until a batch worker has looked for jobs due at the clock's present time (a canary job, due now, ran). */
  batchWorkerCaughtUp(): Promise<void>
  /** Starts one more engine over the same store and clock. */
  addEngine(): Promise<RunningService>
}

export async function startWaitStack(t: Test, options: { engines?: number } = {}): Promise<WaitStack> {
  const clock = testClock(T0)
  const { store, users, engines, client, addEngine } = await startHrStack(t, {
    ...options,
    clock: clock.now,
    engineConfig: { batchPollMs: 20, batchBackoffMs: 20 },
  })
  const until = <T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> => waitUntil(read, done, 10_000)

  return {
    store,
    clock,
    users,
    client,
    engines,
    addEngine,
    async deploy(processId, modelBody) {
      const answer = await client.call('insertModel', 'POST', '/model/insertModel', {
        body: {
          model: { modelID: processId, type: 'process', name: processId, modelBody: { processId, ...modelBody } },
          live: true,
          ...HR,
        },
      })
      if (answer.status !== 200) throw new Error(`${processId} was not deployed: ${JSON.stringify(answer.body)}`)
    },
    async start(processId, input = {}, user = users.employee) {
      const answer = await client.call<Envelope<ProcessStartResult>>('startProcess', 'POST', '/process/start', {
        user: user.userId,
        body: { ...HR, processId, input },
      })
      if (answer.status !== 200) throw new Error(`${processId} did not start: ${JSON.stringify(answer.body)}`)
      return answer.body.data.context.processInstance.processInstanceId
    },
    correlate: (body, { user = users.system, headers } = {}) =>
      client.call<Envelope<MessageCorrelateResult>>('correlateMessage', 'POST', '/message/correlate', {
        user: user.userId,
        body: { ...HR, ...body },
        ...(headers ? { headers } : {}),
      }),
    context: (processInstanceId) => storedInstance(store, processInstanceId),
    activities: (processInstanceId, type) => storedActivities(store, processInstanceId, type),
    jobs: (kind, processInstanceId) => storedBatchJobs(store, kind, processInstanceId, 'createdAt'),
    until,
    batchWorkerCaughtUp() {
      const now = clock.now()
      const payload = { processInstanceId: `no-instance-${now.toISOString()}`, threadId: 'no-thread', timerId: `canary-${now.getTime()}` }
      return batchWorkerCaughtUp(store, now, { kind: 'timer', payload })
    },
  }
}
