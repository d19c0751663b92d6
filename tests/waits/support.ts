/**
 * Test support for waiting threads (timers, messages, child instances): the HR app over one
 * embedded store, one or more engines on the test's clock (batch poll every 20 ms), a gateway in
 * front of the first, and a client whose answers are checked against the gateway's document.
 */
import type { Test } from 'tap'
import type { Envelope } from '../../services/testing/gateway.js'
import { Collections, type StoredActivity, type StoredBatchJob, type StoredContext, type StoredUser } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { batchJobRepository } from '../../services/engine/jobs/batch/repository.js'
import { openTestStore, type RunningService, startService } from '../../services/testing/harness.js'
import { type TestClock, testClock } from '../../services/testing/clock.js'
import { createTestUser } from '../../services/testing/users.js'
import { waitUntil } from '../../services/testing/wait.js'
import {
  type Answer,
  createHrUsers,
  deployHrApp,
  HR,
  type HrUsers,
  type WorkflowClient,
  workflowClient,
} from '../../services/testing/workflow.js'
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
  const store = await openTestStore(t)
  await deployHrApp(store)
  const users = {
    ...(await createHrUsers(store)),
    system: await createTestUser(store, { ...HR, fullName: 'Ivy Integration', isSystemUser: true }),
  }
  const clock = testClock(T0)
  const engines: RunningService[] = []
  const addEngine = async (): Promise<RunningService> => {
    const engine = await startService(t, 'engine', { store, clock: clock.now, config: { batchPollMs: 20, batchBackoffMs: 20 } })
    engines.push(engine)
    return engine
  }
  for (let index = 0; index < (options.engines ?? 1); index++) await addEngine()
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engines[0]!.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
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
    async context(processInstanceId) {
      const stored = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
      if (!stored) throw new Error(`no instance ${processInstanceId}`)
      return stored
    },
    async activities(processInstanceId, type) {
      const all = await store
        .collection<StoredActivity>(Collections.activities)
        .find({ processInstanceId }, { sort: { timeStamp: 1 } })
        .toArray()
      return type === undefined ? all : all.filter((activity) => activity.type === type)
    },
    jobs: (kind, processInstanceId) =>
      store
        .collection<StoredBatchJob>(Collections.batchJobs)
        .find(
          { kind, ...(processInstanceId === undefined ? {} : { 'payload.processInstanceId': processInstanceId }) },
          { sort: { createdAt: 1 } },
        )
        .toArray(),
    until,
    async batchWorkerCaughtUp() {
      const now = clock.now()
      const payload = { processInstanceId: `no-instance-${now.toISOString()}`, threadId: 'no-thread', timerId: `canary-${now.getTime()}` }
      const canary = await batchJobRepository(store).enqueue({ kind: 'timer', ...HR, payload, dueAt: now }, now)
      const ran = await until(
        () => store.collection<StoredBatchJob>(Collections.batchJobs).findOne({ jobId: canary!.jobId }),
        (job) => job?.status === 'done',
      )
      if (ran?.status !== 'done') throw new Error(`no batch worker ran a job due at ${now.toISOString()}: ${JSON.stringify(ran)}`)
    },
  }
}
