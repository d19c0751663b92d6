import t from 'tap'
import type { BatchJobList, BatchJobSummary } from '../../openapi/generated/schemas.js'
import { batchJobRepository } from '../../services/engine/jobs/batch/repository.js'
import { startService } from '../../services/testing/harness.js'
import { HR, startHrEngine, workflowClient } from '../../services/testing/workflow.js'

interface Envelope<Data> {
  status: string
  data: Data
  error?: { code: string }
}

t.test('the batch job list pages through the tenant jobs newest first, a failed job with its error, through the gateway', async (t) => {
  const engine = await startHrEngine(t)
  const gateway = await startService(t, 'gateway', { store: engine.store, config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  const jobs = batchJobRepository(engine.store)
  const base = Date.parse('2026-01-01T00:00:00.000Z')
  // Due far ahead, so the engine's own batch worker leaves them to this test.
  const due = Date.parse('2100-01-01T00:00:00.000Z')
  const ids: string[] = []
  for (let index = 0; index < 5; index++) {
    const job = await jobs.enqueue(
      { kind: 'deploy', ...HR, payload: { index }, dueAt: new Date(due + index * 1000) },
      new Date(base + index * 1000),
    )
    ids.push(job!.jobId)
  }
  await jobs.enqueue(
    { kind: 'deploy', appId: 'sales', organizationId: 'acme', payload: {}, dueAt: new Date(due + 60_000) },
    new Date(base + 10_000),
  )
  // The oldest job failed for good: claimed, then its try failed with a message.
  const claimed = await jobs.claimDue(['deploy'], 'test-owner', new Date(due + 100_000), 60_000)
  t.equal(claimed?.jobId, ids[0])
  await jobs.recordFailure(claimed!, 'test-owner', { status: 'failed' }, 'the model jobScheduler-7 is not valid', new Date(base + 100_000))

  const admin = engine.users.admin.userId
  const pages: BatchJobSummary[][] = []
  let cursor: string | null = null
  do {
    const body: Record<string, unknown> = { ...HR, limit: 2, ...(cursor ? { cursor } : {}) }
    const answer = await client.call<Envelope<BatchJobList>>('listBatchJobs', 'POST', '/external/batchjob/list', { user: admin, body })
    t.equal(answer.status, 200)
    pages.push(answer.body.data.items)
    cursor = answer.body.data.nextCursor
  } while (cursor !== null)
  t.same(
    pages.map((page) => page.length),
    [2, 2, 1],
  )
  t.same(
    pages.flat().map((job) => job.jobId),
    [...ids].reverse(),
    'every tenant job once, newest first, none of another app',
  )

  const failed = await client.call<Envelope<BatchJobList>>('listBatchJobs', 'POST', '/external/batchjob/list', {
    user: admin,
    body: { ...HR, status: 'failed' },
  })
  t.match(failed.body.data, {
    items: [{ jobId: ids[0], status: 'failed', tryCount: 1, lastError: 'the model jobScheduler-7 is not valid', nextRunAt: null }],
    nextCursor: null,
  })
  const waiting = pages.flat().find((job) => job.jobId === ids[4])
  t.equal(waiting?.nextRunAt, new Date(due + 4000).toISOString(), 'a waiting job tells when it runs')

  const one = await client.call<Envelope<BatchJobSummary>>(
    'getBatchJob',
    'GET',
    `/external/batchjob/${ids[0]}?appId=hr&organizationId=acme`,
    { user: admin },
  )
  t.equal(one.status, 200)
  t.match(one.body.data, { jobId: ids[0], kind: 'deploy', status: 'failed', lastError: 'the model jobScheduler-7 is not valid' })
})

t.test('batch jobs of another tenant are invisible, a bad cursor is 400, and only admins may look', async (t) => {
  const engine = await startHrEngine(t)
  const jobs = batchJobRepository(engine.store)
  const theirs = await jobs.enqueue({ kind: 'deploy', appId: 'sales', organizationId: 'acme', payload: {}, dueAt: new Date() }, new Date())
  const { admin, employee } = engine.users
  const hidden = await engine.call<{ code: string }>('getBatchJob', 'GET', `/external/batchjob/${theirs!.jobId}`, { user: admin.userId })
  t.equal(hidden.status, 404)
  t.equal(hidden.body.code, 'wm3150')
  const listed = await engine.call<BatchJobList>('listBatchJobs', 'POST', '/external/batchjob/list', {
    user: admin.userId,
    body: { appId: 'sales', organizationId: 'acme' },
  })
  t.same(listed.body, { items: [], nextCursor: null }, "a body naming another tenant lists the caller's own (none)")
  const badCursor = await engine.call<{ code: string }>('listBatchJobs', 'POST', '/external/batchjob/list', {
    user: admin.userId,
    body: { cursor: 'bm90LWEtY3Vyc29y' },
  })
  t.equal(badCursor.status, 400)
  t.equal(badCursor.body.code, 'wm4000')
  const forbidden = await engine.call<{ code: string }>('listBatchJobs', 'POST', '/external/batchjob/list', {
    user: employee.userId,
    body: {},
  })
  t.equal(forbidden.status, 403)
  t.equal(forbidden.body.code, 'wm4031')
})
