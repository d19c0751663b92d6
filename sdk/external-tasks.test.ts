/**
 * The SDK's external task worker against a real gateway and engine (docs/sdk.md#external-task-workers):
 * the leave request's payroll export served end to end, failures reported with retries until the
 * incident, the lock extended while a handler runs, and `stop()` waiting for it.
 */
import t from 'tap'
import type { Session } from '../openapi/generated/schemas.js'
import { Collections, type StoredConstant } from '../store/collections.js'
import { openTestStore, startService } from '../services/testing/harness.js'
import { createTestUser } from '../services/testing/users.js'
import { held, waitUntil } from '../services/testing/wait.js'
import { createHrUsers, deployHrApp, HR } from '../services/testing/workflow.js'
import { storedInstance } from '../services/testing/instance-store.js'
import { startWorkerStack, TENANT } from '../services/engine/external-tasks/test-support.js'
import { WorkflowClient } from './client.js'
import { type ExternalTask, ExternalTaskWorker } from './external-tasks.js'

t.test('the leave request: after approval its payroll export is served by an SDK worker, and the process completes', async (t) => {
  const store = await openTestStore(t)
  await deployHrApp(store)
  await store.collection<StoredConstant>(Collections.constants).insertOne({
    _id: 'acme/hr:payrollExport',
    ...HR,
    name: 'payrollExport',
    value: 'worker',
    modelID: 'hr-constants',
  })
  const users = await createHrUsers(store)
  const system = await createTestUser(store, { ...HR, fullName: 'Payroll Bridge', isSystemUser: true })
  const engine = await startService(t, 'engine', { store, config: { externalTaskPollMs: 20 } })
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engine.url } })
  const as = (userId: string) => new WorkflowClient({ baseUrl: gateway.url, ...HR, userId })

  const seen: ExternalTask[] = []
  const worker = new ExternalTaskWorker(as(system.userId))
  worker.subscribe(
    'payroll-export',
    async (task) => {
      seen.push(task)
      return { reference: `PAY-${(task.input as { days: number }).days}` }
    },
    { lockDuration: 60_000, asyncResponseTimeout: 5_000 },
  )
  t.teardown(() => worker.stop())

  const employee = as(users.employee.userId)
  const started = await employee.post('/context', { body: { processId: 'leave-request', input: { days: 3, reason: 'Family visit' } } })
  const id = started.context.processInstance.processInstanceId
  const submit = (session: Session, client: WorkflowClient) =>
    client.post('/action/complete', {
      body: {
        processId: 'leave-request',
        processInstanceId: id,
        businessKey: session.context.processInstance.businessKey,
        taskId: session.formContext.task!.taskId,
        actionType: 'complete',
        dataInstance: session.context.dataInstance,
      },
    })
  await submit(started, employee)
  const manager = as(users.manager.userId)
  const approval = await manager.post('/context', { body: { processId: 'leave-request', processInstanceId: id, skipToForm: true } })
  await submit(approval, manager)
  const done = await waitUntil(
    () => storedInstance(store, id),
    (stored) => stored.processStatus === 'completed',
    20_000,
  )
  t.equal(done.processStatus, 'completed')
  t.same(done.dataInstance.payrollExport, { reference: 'PAY-3' })
  t.match(seen[0], { topic: 'payroll-export', processInstanceId: id, input: { employee: users.employee.userId, days: 3 } })
  t.equal(seen[0]?.businessKey, done.businessKey)
})

t.test('a failing handler is reported with the retries left and a growing timeout, then the incident', async (t) => {
  const stack = await startWorkerStack(t)
  const worker = new ExternalTaskWorker(
    new WorkflowClient({ baseUrl: stack.gateways[0]!.url, ...TENANT, userId: stack.users.worker.userId }),
  )
  let calls = 0
  worker.subscribe(
    'payroll',
    () => {
      calls++
      throw new Error(`payroll down (${calls})`)
    },
    { asyncResponseTimeout: 2_000, backoffMs: 5_000 },
  )
  t.teardown(() => worker.stop())
  const id = await stack.start()
  const afterFirst = await waitUntil(
    () => stack.tasks(id),
    (tasks) => tasks[0]?.retries === 1,
  )
  t.match(afterFirst[0], { retries: 1, errorMessage: 'payroll down (1)' })
  t.equal(afterFirst[0]!.availableAt.getTime() - stack.clock.now().getTime(), 5_000, 'retried after the backoff')
  stack.clock.advance(5_000)
  const failed = await waitUntil(
    () => stack.instance(id),
    (stored) => stored.processStatus === 'failed',
  )
  t.equal(failed.processStatus, 'failed')
  t.match(failed.processInstance.threads[0]?.error, { message: 'payroll down (2)' })
  t.equal(calls, 2)
})

t.test('the lock is extended while the handler runs, and stop() waits for the handler', async (t) => {
  const stack = await startWorkerStack(t)
  const worker = new ExternalTaskWorker(
    new WorkflowClient({ baseUrl: stack.gateways[0]!.url, ...TENANT, userId: stack.users.worker.userId }),
  )
  const release = held()
  let handling = false
  worker.subscribe(
    'payroll',
    async () => {
      handling = true
      await release.released
      return { finished: true }
    },
    { lockDuration: 200, asyncResponseTimeout: 2_000 },
  )
  const id = await stack.start()
  await waitUntil(
    () => handling,
    (value) => value,
  )
  const lockedUntil = (await stack.tasks(id))[0]!.lockExpiresAt!.getTime()
  stack.clock.advance(150)
  const extended = await waitUntil(
    () => stack.tasks(id),
    (tasks) => (tasks[0]?.lockExpiresAt?.getTime() ?? 0) > lockedUntil,
  )
  t.equal(extended[0]!.lockExpiresAt!.getTime(), stack.clock.now().getTime() + 200, 'extended from the engine’s now')
  stack.clock.advance(150)
  t.same(await stack.fetch({ workerId: 'other' }), [], 'the extended lock holds past the first one’s end')
  const stopped = worker.stop()
  let stopDone = false
  void stopped.then(() => (stopDone = true))
  t.equal((await stack.instance(id)).processStatus, 'running')
  t.notOk(stopDone, 'stop() waits while the handler runs')
  release.release()
  await stopped
  t.equal((await stack.instance(id)).processStatus, 'completed', 'the running task was completed before stop() resolved')
})
