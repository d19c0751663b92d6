import t from 'tap'
import type { Message } from '../../../../openapi/generated/schemas.js'
import { Collections, type StoredBatchJob, type StoredModel } from '../../../../store/collections.js'
import { failedBatchJob } from '../../../testing/batch-jobs.js'
import { openTestStore, startService } from '../../../testing/harness.js'
import { waitUntil } from '../../../testing/wait.js'
import { createTestUser } from '../../../testing/users.js'
import { workflowClient } from '../../../testing/workflow.js'

const HOUR = 3_600_000
const TENANT = { appId: 'hr', organizationId: 'acme' }

/** A deploy job that failed for good `hoursAgo` hours ago (its model may since have been fixed). */
function failedDeploy(jobId: string, hoursAgo: number, modelID: string): StoredBatchJob {
  return failedBatchJob(jobId, new Date(Date.now() - hoursAgo * HOUR), { ...TENANT, payload: { modelID, version: 1 } })
}

t.test('POST /external/batchjob/retry requeues the failed jobs of the window, which then run again', async (t) => {
  const store = await openTestStore(t)
  await store.collection<StoredModel>(Collections.models).insertOne({
    modelID: 'nightly',
    type: 'jobScheduler',
    ...TENANT,
    version: 1,
    updateDate: new Date().toISOString(),
    live: true,
    modelBody: { schedules: [{ id: 'vat-check', cron: '0 6 * * *', runFunction: { functionId: 'vatOf' } }] },
  })
  const jobs = store.collection<StoredBatchJob>(Collections.batchJobs)
  await jobs.insertMany([failedDeploy('recent', 2, 'nightly'), failedDeploy('old', 30, 'nightly')])
  const admin = await createTestUser(store, { ...TENANT, fullName: 'Ada Admin', roles: ['admin'] })
  const { url } = await startService(t, 'engine', { store, config: { batchPollMs: 50 } })
  const engine = workflowClient(t, url)

  const answer = await engine.call<Message>('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', {
    user: admin.userId,
    body: { ...TENANT },
  })
  t.same(answer, { status: 200, body: { message: '1 failed batch job will run again' }, headers: answer.headers })
  const recent = await waitUntil(
    () => jobs.findOne({ jobId: 'recent' }),
    (job) => job?.status === 'done',
  )
  t.match(recent, { status: 'done', tryCount: 0 }, 'the requeued deploy ran again, from tryCount 0')
  t.equal(
    (await store.collection(Collections.schedules).findOne({ _id: 'acme/hr:nightly:vat-check' }))?.modelID,
    'nightly',
    'and deployed the schedule',
  )
  t.match(await jobs.findOne({ jobId: 'old' }), { status: 'failed', tryCount: 10 }, 'a failure before the 24-hour window stays failed')

  const wider = await engine.call<Message>('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', {
    user: admin.userId,
    body: { ...TENANT, nHours: 48 },
  })
  t.equal(wider.body.message, '1 failed batch job will run again', 'nHours widens the window')
  const none = await engine.call<Message>('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', {
    user: admin.userId,
    body: { ...TENANT, nHours: 48 },
  })
  t.equal(none.body.message, 'No failed batch job found in the last 48 hours')
})

t.test("a named user's retry reaches only their own tenant's jobs", async (t) => {
  const store = await openTestStore(t)
  const jobs = store.collection<StoredBatchJob>(Collections.batchJobs)
  await jobs.insertOne(failedDeploy('hr-job', 1, 'nightly'))
  const salesUser = await createTestUser(store, {
    appId: 'sales',
    organizationId: 'acme',
    fullName: 'Sam Sales',
    swimlanes: [],
    roles: ['admin'],
  })
  const { url } = await startService(t, 'engine', { store })
  const answer = await workflowClient(t, url).call<Message>('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', {
    user: salesUser.userId,
    body: TENANT,
  })
  t.equal(answer.body.message, 'No failed batch job found in the last 24 hours')
  t.match(await jobs.findOne({ jobId: 'hr-job' }), { status: 'failed', tryCount: 10 })
})

t.test('a bad retry request is a 400 record naming the field and requeues nothing', async (t) => {
  const store = await openTestStore(t)
  const jobs = store.collection<StoredBatchJob>(Collections.batchJobs)
  await jobs.insertOne(failedDeploy('recent', 1, 'nightly'))
  const admin = await createTestUser(store, { ...TENANT, fullName: 'Ada Admin', roles: ['admin'] })
  const hrUser = await createTestUser(store, { ...TENANT, fullName: 'Hal Hr', roles: ['user'] })
  const { url } = await startService(t, 'engine', { store })
  const engine = workflowClient(t, url)
  for (const nHours of [0, -1, 'six']) {
    const answer = await engine.call('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', {
      user: admin.userId,
      body: { ...TENANT, nHours },
    })
    t.match(answer, { status: 400, body: { code: 'wm4000', parameters: { field: 'body.nHours' } } }, `nHours ${JSON.stringify(nHours)}`)
  }
  t.match(await engine.call('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', { user: 'no-such-user', body: TENANT }), {
    status: 401,
    body: { code: 'wm4010' },
  })
  t.match(
    await engine.call('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', { body: TENANT }),
    { status: 401, body: { code: 'wm4010' } },
    'nor without a user',
  )
  t.match(
    await engine.call('retryFailedBatchJobs', 'POST', '/external/batchjob/retry', { user: hrUser.userId, body: TENANT }),
    { status: 403, body: { code: 'wm4031' } },
    'nor by a user who is not admin',
  )
  t.match(await jobs.findOne({ jobId: 'recent' }), { status: 'failed', tryCount: 10 }, 'nothing changed')
})
