/**
 * External tasks through the gateway (docs/reference/external-tasks.md): fetch and lock, complete,
 * failures and incidents, rollback, lock lapses, two engines over one store, a restart, long
 * polling, suspension and cancellation, and tenant isolation. Time is the test clock's.
 */
import t from 'tap'
import type { IsSuccess, LockedExternalTasks } from '../../../openapi/generated/schemas.js'
import { startService } from '../../testing/harness.js'
import { waitUntil } from '../../testing/wait.js'
import { OTHER_ORG, payrollModel, startWorkerStack, TENANT, type WorkerStack } from './test-support.js'

function workerCall(stack: WorkerStack, externalTaskId: string, action: string, body: Record<string, unknown>, via = 0) {
  const operationIds: Record<string, string> = {
    complete: 'completeExternalTask',
    failure: 'reportExternalTaskFailure',
    extendLock: 'extendExternalTaskLock',
    unlock: 'unlockExternalTask',
  }
  return stack.send<IsSuccess>(operationIds[action]!, `/external/worker/${externalTaskId}/${action}`, {
    as: stack.users.worker,
    via,
    body: { ...TENANT, workerId: 'worker-1', ...body },
  })
}

t.test('a worker fetches the task with its input, instance and business key, and completes it: the output lands at `as`', async (t) => {
  const stack = await startWorkerStack(t)
  const id = await stack.start({ days: 4 })
  const [task, ...rest] = await stack.fetch()
  t.equal(rest.length, 0)
  const instance = await stack.instance(id)
  t.match(task, {
    topic: 'payroll',
    input: { days: 4, employee: stack.users.employee.userId },
    processInstanceId: id,
    processId: 'payroll',
    businessKey: instance.businessKey,
    retries: 2,
    workerId: 'worker-1',
    lockExpiresAt: new Date(stack.clock.now().getTime() + 60_000).toISOString(),
  })
  t.same(await stack.fetch({ workerId: 'worker-2' }), [], 'a locked task is handed to nobody else')
  const done = await workerCall(stack, task!.externalTaskId, 'complete', { output: { reference: 'PR-1' } })
  t.equal(done.status, 200)
  const after = await stack.instance(id)
  t.equal(after.processStatus, 'completed')
  t.same(after.dataInstance.payroll, { reference: 'PR-1' })
  t.same(await stack.tasks(), [], 'the task is gone with the commit')
  const again = await workerCall(stack, task!.externalTaskId, 'complete', {})
  t.match(again, { status: 404, body: { error: { code: 'wm3231' } } })
})

t.test('only system users work external tasks; only the lock holder completes', async (t) => {
  const stack = await startWorkerStack(t)
  await stack.start()
  const refused = await stack.send('fetchAndLockExternalTasks', '/external/worker/fetchAndLock', {
    as: stack.users.manager,
    body: { ...TENANT, workerId: 'w', topics: [{ topic: 'payroll', lockDuration: 1000 }], maxTasks: 1 },
  })
  t.match(refused, { status: 403, body: { error: { code: 'wm3230' } } })
  const unlocked = (await stack.tasks())[0]!
  t.match(await workerCall(stack, unlocked._id, 'complete', {}), { status: 409, body: { error: { code: 'wm3233' } } }, 'never fetched')
  const [task] = await stack.fetch()
  t.match(await workerCall(stack, task!.externalTaskId, 'complete', { workerId: 'intruder' }), {
    status: 409,
    body: { error: { code: 'wm3232' } },
  })
  t.match(await workerCall(stack, task!.externalTaskId, 'extendLock', { workerId: 'intruder', newDuration: 5 }), { status: 409 })
  const bad = await stack.send('fetchAndLockExternalTasks', '/external/worker/fetchAndLock', {
    as: stack.users.worker,
    body: { ...TENANT, workerId: 'w', topics: [{ topic: 'payroll', lockDuration: 1000 }], maxTasks: 1, asyncResponseTimeout: 600_000 },
  })
  t.match(bad, { status: 400, body: { error: { code: 'wm4000' } } }, 'a long poll is bounded (60 s)')
  t.equal((await stack.tasks())[0]?.workerId, 'worker-1', 'nothing changed')
})

t.test('a lapsed lock returns the task to the queue: another worker gets it, the first one is refused', async (t) => {
  const stack = await startWorkerStack(t)
  const id = await stack.start()
  const [first] = await stack.fetch({ lockDuration: 10_000 })
  t.equal((await workerCall(stack, first!.externalTaskId, 'extendLock', { newDuration: 20_000 })).status, 200)
  stack.clock.advance(15_000)
  t.same(await stack.fetch({ workerId: 'worker-2' }), [], 'the extended lock still holds')
  stack.clock.advance(5_001)
  const [second] = await stack.fetch({ workerId: 'worker-2' })
  t.equal(second?.externalTaskId, first?.externalTaskId, 'the same task, re-handed')
  t.match(await workerCall(stack, first!.externalTaskId, 'complete', {}), { status: 409, body: { error: { code: 'wm3232' } } })
  t.equal((await workerCall(stack, first!.externalTaskId, 'complete', { workerId: 'worker-2', output: { ok: 1 } })).status, 200)
  t.equal((await stack.instance(id)).processStatus, 'completed')
  const metrics = await fetch(`${stack.engines[0]!.url}/metrics`).then((answer) => answer.text())
  t.match(metrics, /workflow_external_task_lock_lapses_total\{topic="payroll"\} 1/)
  t.match(metrics, /workflow_external_task_duration_seconds_count\{topic="payroll"\} 1/)
})

t.test('unlock gives the task back at once', async (t) => {
  const stack = await startWorkerStack(t)
  await stack.start()
  const [task] = await stack.fetch()
  t.equal((await workerCall(stack, task!.externalTaskId, 'unlock', {})).status, 200)
  const metrics = await fetch(`${stack.engines[0]!.url}/metrics`).then((answer) => answer.text())
  t.match(metrics, /workflow_external_tasks_waiting\{topic="payroll"\} 1/)
  t.equal((await stack.fetch({ workerId: 'worker-2' }))[0]?.externalTaskId, task!.externalTaskId)
})

t.test('failures with retries left come back after the timeout; the last one is an incident that /action/retry clears', async (t) => {
  const stack = await startWorkerStack(t)
  const id = await stack.start()
  const [task] = await stack.fetch()
  const failed = await workerCall(stack, task!.externalTaskId, 'failure', { errorMessage: 'payroll busy', retryTimeout: 30_000 })
  t.equal(failed.status, 200)
  t.same(await stack.fetch(), [], 'not before the retry timeout')
  stack.clock.advance(30_000)
  const [again] = await stack.fetch()
  t.match(again, { externalTaskId: task!.externalTaskId, retries: 1, errorMessage: 'payroll busy' })
  t.equal((await workerCall(stack, task!.externalTaskId, 'failure', { errorMessage: 'payroll down' })).status, 200)
  const incident = await stack.instance(id)
  t.equal(incident.processStatus, 'failed')
  const thread = incident.processInstance.threads.find((candidate) => candidate.status === 'failed')
  t.match(thread, { stepId: 'export', error: { message: 'payroll down', code: 'EXTERNAL_TASK_FAILED' } })
  t.same(await stack.tasks(), [], 'the failed task is gone')
  const retried = await stack.send('retryAction', '/action/retry', {
    as: stack.users.employee,
    body: { ...TENANT, processInstanceId: id, threadId: thread!.threadId },
  })
  t.equal(retried.status, 200)
  const [fresh] = await stack.fetch()
  t.ok(fresh && fresh.externalTaskId !== task!.externalTaskId, 'the retry created a new task')
  t.equal(fresh?.retries, 2)
  t.equal((await workerCall(stack, fresh!.externalTaskId, 'complete', { output: 'done' })).status, 200)
  t.equal((await stack.instance(id)).processStatus, 'completed')
})

t.test('onError "rollback": the last failure puts the instance back as it was before the step was reached', async (t) => {
  const stack = await startWorkerStack(t, { body: payrollModel({ onError: 'rollback', retries: 1 }) })
  const id = await stack.start({ days: 2, approval: true })
  const approve = (await stack.instance(id)).processInstance.tasks[0]!
  const completed = await stack.send('completeAction', '/action/complete', {
    as: stack.users.manager,
    body: {
      ...TENANT,
      processInstanceId: id,
      taskId: approve.taskId,
      actionType: 'complete',
      dataInstance: { days: 2, approval: true, ok: 1 },
    },
  })
  t.equal(completed.status, 200)
  const [task] = await stack.fetch()
  t.equal((await workerCall(stack, task!.externalTaskId, 'failure', { errorMessage: 'rejected' })).status, 200)
  const after = await stack.instance(id)
  t.equal(after.processStatus, 'running')
  t.match(
    after.processInstance.tasks.find((candidate) => candidate.taskId === approve.taskId),
    { status: 'open' },
    'approval open again',
  )
  t.notOk(after.dataInstance.ok, "the approval's data is undone too")
  t.same(await stack.tasks(), [])
})

t.test('suspended: kept but not handed out until resumed; cancelled: removed', async (t) => {
  const stack = await startWorkerStack(t)
  const admin = stack.users.worker
  const id = await stack.start()
  t.equal((await stack.send('suspendProcess', `/process/${id}/suspend`, { as: admin, body: { ...TENANT } })).status, 200)
  t.same(await stack.fetch(), [], 'not handed out while suspended')
  t.equal((await stack.tasks(id)).length, 1, 'but kept')
  t.equal((await stack.send('resumeProcess', `/process/${id}/resume`, { as: admin, body: { ...TENANT } })).status, 200)
  const [task] = await stack.fetch()
  t.ok(task, 'handed out once resumed')
  t.equal((await stack.send('cancelProcess', `/process/${id}/cancel`, { as: admin, body: { ...TENANT } })).status, 200)
  t.same(await stack.tasks(id), [], 'removed with the cancellation')
  t.match(await workerCall(stack, task!.externalTaskId, 'complete', {}), { status: 404 })
})

t.test('a worker of another organization with the same appId never sees or touches the task', async (t) => {
  const stack = await startWorkerStack(t)
  await stack.start()
  t.same(await stack.fetch({ as: stack.users.otherWorker }), [])
  const [task] = await stack.fetch()
  const foreign = await stack.send('completeExternalTask', `/external/worker/${task!.externalTaskId}/complete`, {
    as: stack.users.otherWorker,
    body: { ...OTHER_ORG, workerId: 'worker-1' },
  })
  t.match(foreign, { status: 404, body: { error: { code: 'wm3231' } } })
  t.equal((await stack.tasks())[0]?.workerId, 'worker-1')
})

t.test(
  'two engines over one store: of workers racing for one task exactly one gets it; a long poll hears of tasks of the other engine',
  async (t) => {
    const stack = await startWorkerStack(t, { engines: 2 })
    await stack.start()
    const fetched = await Promise.all(
      Array.from({ length: 6 }, (_, index) => stack.fetch({ workerId: `w${index}`, via: index % 2, maxTasks: 1 })),
    )
    t.equal(fetched.flat().length, 1, 'exactly one worker holds the task')
    // Engine 1's long poll; the task is created through engine 0.
    const polling = stack.fetch({ workerId: 'poller', via: 1, wait: 30_000 })
    await stack.start()
    const [polled] = await polling
    t.ok(polled, 'the long poll answered with the new task')
  },
)

t.test('a long poll answers as soon as a task is created on its engine, and ends with the engine', async (t) => {
  const stack = await startWorkerStack(t, { config: { externalTaskPollMs: 60_000 } })
  const polling = stack.fetch({ wait: 60_000 })
  const id = await stack.start()
  t.equal((await polling)[0]?.processInstanceId, id, 'woken by the in-process notification, not the 60 s poll')
  const extra = await startService(t, 'engine', { store: stack.store, clock: stack.clock.now, config: { externalTaskPollMs: 60_000 } })
  const extraGateway = await startService(t, 'gateway', { store: stack.store, config: { engineUrl: extra.url } })
  const ending = fetch(`${extraGateway.url}/external/worker/fetchAndLock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', user: stack.users.worker.userId },
    body: JSON.stringify({ ...TENANT, workerId: 'w', topics: [{ topic: 'nothing' }], maxTasks: 1, asyncResponseTimeout: 60_000 }),
  })
  const answer = await ending
  t.equal(answer.status, 400, 'a topic needs its lockDuration')
  const closing = fetch(`${extraGateway.url}/external/worker/fetchAndLock`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', user: stack.users.worker.userId },
    body: JSON.stringify({
      ...TENANT,
      workerId: 'w',
      topics: [{ topic: 'nothing', lockDuration: 5 }],
      maxTasks: 1,
      asyncResponseTimeout: 60_000,
    }),
  })
  await waitUntil(
    () => extra.app.externalTaskService.longPolls,
    (count) => count > 0,
  )
  await extra.app.close()
  const closed = await closing
  t.equal(closed.status, 200, 'the long poll ended with the engine, answering what it had')
  t.same(((await closed.json()) as { data: unknown }).data, [])
})

t.test('a restart between lock and complete: the lock is in the store, the new engine completes it', async (t) => {
  const stack = await startWorkerStack(t)
  const id = await stack.start()
  const [task] = await stack.fetch()
  await stack.engines[0]!.app.close()
  const engine = await startService(t, 'engine', { store: stack.store, clock: stack.clock.now })
  const gateway = await startService(t, 'gateway', { store: stack.store, config: { engineUrl: engine.url } })
  stack.gateways.push(gateway)
  t.equal((await workerCall(stack, task!.externalTaskId, 'complete', { output: { after: 'restart' } }, 1)).status, 200)
  t.same((await stack.instance(id)).dataInstance.payroll, { after: 'restart' })
})

t.test('fetchAndLock answers at most maxTasks, in the order they were created; the next call gets the rest', async (t) => {
  const stack = await startWorkerStack(t)
  for (let index = 0; index < 3; index++) {
    await stack.start()
    stack.clock.advance(1)
  }
  const page: LockedExternalTasks = await stack.fetch({ maxTasks: 2 })
  t.equal(page.length, 2)
  t.ok(Date.parse(page[0]!.createdAt) < Date.parse(page[1]!.createdAt))
  const rest = await stack.fetch({ workerId: 'worker-2', maxTasks: 2 })
  t.equal(rest.length, 1)
  t.notOk(page.some((task) => task.externalTaskId === rest[0]?.externalTaskId))
})

t.test('a client that goes away ends its long poll, at the engine and through the gateway', async (t) => {
  const stack = await startWorkerStack(t, { config: { externalTaskPollMs: 60_000 } })
  const service = stack.engines[0]!.app.externalTaskService
  const body = JSON.stringify({
    ...TENANT,
    workerId: 'w',
    topics: [{ topic: 'payroll', lockDuration: 1000 }],
    maxTasks: 1,
    asyncResponseTimeout: 60_000,
  })
  for (const url of [stack.engines[0]!.url, stack.gateways[0]!.url]) {
    const leaving = new AbortController()
    const polling = fetch(`${url}/external/worker/fetchAndLock`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', user: stack.users.worker.userId },
      body,
      signal: leaving.signal,
    }).catch((error: unknown) => error)
    await waitUntil(
      () => service.longPolls,
      (count) => count === 1,
    )
    leaving.abort()
    await polling
    const after = await waitUntil(
      () => service.longPolls,
      (count) => count === 0,
    )
    t.equal(after, 0, `the wait ended when the client left (${url === stack.engines[0]!.url ? 'engine' : 'gateway'})`)
  }
  await stack.start()
  t.equal((await stack.fetch()).length, 1, 'and locked nothing meanwhile')
})

t.test('onError "rollback" on an instance that changed since the task was created fails the thread instead', async (t) => {
  const stack = await startWorkerStack(t, { body: payrollModel({ onError: 'rollback', retries: 1 }) })
  const id = await stack.start({ days: 2, approval: true })
  const approve = (await stack.instance(id)).processInstance.tasks[0]!
  const body = { ...TENANT, processInstanceId: id, taskId: approve.taskId, actionType: 'complete', dataInstance: { days: 2 } }
  t.equal((await stack.send('completeAction', '/action/complete', { as: stack.users.manager, body })).status, 200)
  const [task] = await stack.fetch()
  // A suspension and a resumption change the instance after the task was created.
  for (const operation of ['suspend', 'resume'])
    await stack.send(`${operation}Process`, `/process/${id}/${operation}`, { as: stack.users.worker, body: { ...TENANT } })
  t.equal((await workerCall(stack, task!.externalTaskId, 'failure', { errorMessage: 'rejected' })).status, 200)
  const after = await stack.instance(id)
  t.equal(after.processStatus, 'failed')
  t.match(after.processInstance.threads.find((thread) => thread.status === 'failed')?.error?.message, /rejected \(not rolled back/)
})
