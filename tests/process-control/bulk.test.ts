/**
 * Bulk operations through the gateway (docs/reference/lifecycle.md#bulk-operations): `POST /external/process/bulk` queues a batch job
 * that suspends, resumes, cancels or retries the matching instances of the caller's tenant, each in
 * its own commit, and `GET /external/batchjob/:jobId` follows its progress.
 */
import t, { type Test } from 'tap'
import type { BatchJobSummary, Session } from '../../openapi/generated/schemas.js'
import { storedActivities, storedInstance } from '../../services/testing/instance-store.js'
import { createTestUser } from '../../services/testing/users.js'
import { waitUntil } from '../../services/testing/wait.js'
import { HR } from '../../services/testing/workflow.js'
import { type ControlStack, startControlStack } from './stack.js'

type Bulk = { operation: 'suspend' | 'resume' | 'cancel' | 'retry'; filter: Record<string, unknown>; reason?: string }

async function runBulk(stack: ControlStack, t: Test, request: Bulk): Promise<BatchJobSummary> {
  const queued = await stack.send<{ jobId: string }>('startBulkOperation', 'POST', '/external/process/bulk', {
    as: stack.users.admin,
    body: { ...HR, ...request },
  })
  t.equal(queued.status, 200, `${request.operation} queued`)
  const jobId = queued.body.data.jobId
  const read = async () =>
    (await stack.send<BatchJobSummary>('getBatchJob', 'GET', `/external/batchjob/${jobId}?appId=hr`, { as: stack.users.admin })).body.data
  return waitUntil(read, (job) => job.status === 'done' || job.status === 'failed', 20_000, 100)
}

const idOf = (session: Session) => session.context.processInstance.processInstanceId

t.test('bulk suspend, resume and cancel work through the matching instances and record their progress', async (t) => {
  const stack = await startControlStack(t)
  const { store } = stack
  const leaves = [await stack.startLeave(), await stack.startLeave(), await stack.startLeave(), await stack.startLeave()]
  const purchase = await stack.send<Session>('openContext', 'POST', '/context', {
    as: stack.users.employee,
    body: { ...HR, processId: 'purchase', input: { item: 'Laptop', amount: 1200 } },
  })
  t.equal(purchase.status, 200)

  const suspended = await runBulk(stack, t, {
    operation: 'suspend',
    filter: { processId: 'leave-request', processStatus: 'running' },
    reason: 'Payroll migration',
  })
  t.match(suspended, { kind: 'bulkOperation', status: 'done', progress: { total: 4, done: 4, failed: [] } })
  for (const session of leaves) t.equal((await storedInstance(store, idOf(session))).processStatus, 'suspended')
  t.equal((await storedInstance(store, idOf(purchase.body.data))).processStatus, 'running', 'another process is left alone')
  const [activity] = await storedActivities(store, idOf(leaves[0] as Session), 'suspended')
  t.match(activity, { userId: stack.users.admin.userId, details: { reason: 'Payroll migration' } }, 'each instance logs its own activity')

  // businessKeys: only the named instances.
  const named = [leaves[0], leaves[1]].map((session) => (session as Session).context.processInstance.businessKey)
  const resumed = await runBulk(stack, t, { operation: 'resume', filter: { processId: 'leave-request', businessKeys: named } })
  t.match(resumed.progress, { total: 2, done: 2, failed: [] })
  t.same(await Promise.all(leaves.map(async (session) => (await storedInstance(store, idOf(session))).processStatus)), [
    'running',
    'running',
    'suspended',
    'suspended',
  ])

  // A start window that no instance falls into matches nothing; one around them matches all.
  const future = new Date(Date.now() + 3_600_000).toISOString()
  t.match((await runBulk(stack, t, { operation: 'cancel', filter: { processId: 'leave-request', startedAfter: future } })).progress, {
    total: 0,
    done: 0,
    failed: [],
  })
  const cancelled = await runBulk(stack, t, {
    operation: 'cancel',
    filter: { processId: 'leave-request', startedBefore: future, startedAfter: '2000-01-01T00:00:00Z' },
    reason: 'Season closed',
  })
  t.match(cancelled.progress, { total: 4, done: 4, failed: [] })
  for (const session of leaves) t.equal((await storedInstance(store, idOf(session))).processStatus, 'cancelled')

  // Instances whose state refuses the operation are listed with their error; the others are done.
  await stack.startLeave()
  const partly = await runBulk(stack, t, { operation: 'suspend', filter: { processId: 'leave-request' } })
  t.equal(partly.progress?.total, 5)
  t.equal(partly.progress?.done, 1)
  t.equal(partly.progress?.failed.length, 4)
  t.match(partly.progress?.failed[0], { error: /^wm3141: / }, 'a cancelled instance cannot be suspended')
})

t.test('bulk retry re-runs the failed threads of failed instances', async (t) => {
  const stack = await startControlStack(t)
  const failed = [await stack.startFailedLeave(), await stack.startFailedLeave()]
  const running = await stack.startLeave()
  await stack.payrollOnline(true)
  const job = await runBulk(stack, t, { operation: 'retry', filter: { processId: 'leave-request' } })
  t.match(job.progress, { total: 2, done: 2, failed: [] }, 'only the failed instances')
  for (const session of failed) t.equal((await storedInstance(stack.store, idOf(session))).processStatus, 'completed')
  t.equal((await storedInstance(stack.store, idOf(running))).processStatus, 'running')
})

t.test('bulk operations and their jobs are for admins and system users of the tenant', async (t) => {
  const stack = await startControlStack(t)
  const body = { ...HR, operation: 'suspend', filter: { processId: 'leave-request' } }
  t.match(await stack.send('startBulkOperation', 'POST', '/external/process/bulk', { as: stack.users.employee, body }), {
    status: 403,
    body: { error: { code: 'wm4031' } },
  })
  t.match(
    await stack.send('startBulkOperation', 'POST', '/external/process/bulk', {
      as: stack.users.admin,
      body: { ...body, operation: 'archive' },
    }),
    { status: 400 },
  )
  t.match(
    await stack.send('startBulkOperation', 'POST', '/external/process/bulk', {
      as: stack.users.admin,
      body: { ...HR, operation: 'suspend', filter: {} },
    }),
    { status: 400 },
    'processId is required',
  )
  const queued = await stack.send<{ jobId: string }>('startBulkOperation', 'POST', '/external/process/bulk', {
    as: stack.users.system,
    body,
  })
  t.equal(queued.status, 200, 'a system user may')
  const jobId = queued.body.data.jobId
  t.match(await stack.send('getBatchJob', 'GET', `/external/batchjob/${jobId}?appId=hr`, { as: stack.users.employee }), { status: 403 })
  const foreignAdmin = await createTestUser(stack.store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sue Sales-Admin',
    roles: ['admin'],
  })
  t.match(
    await stack.send('getBatchJob', 'GET', `/external/batchjob/${jobId}?appId=sales`, { as: foreignAdmin }),
    { status: 404, body: { error: { code: 'wm3150' } } },
    "another tenant's job is not found",
  )
  t.match(await stack.send('getBatchJob', 'GET', '/external/batchjob/unknown?appId=hr', { as: stack.users.admin }), {
    status: 404,
    body: { error: { code: 'wm3150' } },
  })
})

t.test('a bulk job works only in the tenant of the admin who queued it', async (t) => {
  const stack = await startControlStack(t)
  const id = idOf(await stack.startLeave())
  const foreignAdmin = await createTestUser(stack.store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sue Sales-Admin',
    roles: ['admin'],
  })
  const queued = await stack.send<{ jobId: string }>('startBulkOperation', 'POST', '/external/process/bulk', {
    as: foreignAdmin,
    body: { appId: 'hr', organizationId: 'acme', operation: 'cancel', filter: { processId: 'leave-request' } },
  })
  t.equal(queued.status, 200, "queued in the caller's own tenant, whatever the body names")
  const read = async () =>
    (
      await stack.send<BatchJobSummary>('getBatchJob', 'GET', `/external/batchjob/${queued.body.data.jobId}?appId=sales`, {
        as: foreignAdmin,
      })
    ).body.data
  const job = await waitUntil(read, (candidate) => candidate.status === 'done' || candidate.status === 'failed', 20_000, 100)
  t.match(job, { status: 'done', progress: { total: 0, done: 0, failed: [] } })
  t.equal((await storedInstance(stack.store, id)).processStatus, 'running', "the other tenant's instance is untouched")
})
