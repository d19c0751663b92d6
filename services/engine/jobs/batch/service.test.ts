import t from 'tap'
import type { Store } from '../../../../store/port.js'
import type { StoredBatchJob } from '../../../../store/collections.js'
import { failedBatchJob } from '../../../testing/batch-jobs.js'
import { openTestStore } from '../../../testing/harness.js'
import { batchJobRepository } from './repository.js'
import { retryFailedJobs, retryMessage, windowStart } from './service.js'

const NOW = new Date('2025-06-30T08:00:00.000Z')
const HOUR = 3_600_000

function failedJob(jobId: string, hoursAgo: number, appId = 'hr'): StoredBatchJob {
  return failedBatchJob(jobId, new Date(NOW.getTime() - hoursAgo * HOUR), { appId })
}

async function seed(t: Parameters<typeof openTestStore>[0]): Promise<Store> {
  const store = await openTestStore(t)
  await store
    .collection<StoredBatchJob>('batchJobs')
    .insertMany([
      failedJob('one-hour-ago', 1),
      failedJob('almost-a-day-ago', 23.9),
      failedJob('two-days-ago', 48.5),
      { ...failedJob('done-recently', 1), status: 'done' },
      failedJob('other-app', 1, 'sales'),
    ])
  return store
}

async function statusOf(store: Store): Promise<Record<string, string>> {
  const jobs = await store.collection<StoredBatchJob>('batchJobs').find({}).toArray()
  return Object.fromEntries(jobs.map((job) => [job.jobId, `${job.status}/${job.tryCount}`]))
}

t.test('without nHours, the jobs that failed within the last 24 hours go back to waiting with tryCount 0', async (t) => {
  const store = await seed(t)
  const result = await retryFailedJobs(batchJobRepository(store), {}, null, NOW)
  t.same(result, { requeued: 3, message: '3 failed batch jobs will run again' })
  t.same(await statusOf(store), {
    'one-hour-ago': 'waiting/0',
    'almost-a-day-ago': 'waiting/0',
    'two-days-ago': 'failed/10',
    'done-recently': 'done/10',
    'other-app': 'waiting/0',
  })
  const requeued = await batchJobRepository(store).findByJobId('one-hour-ago')
  t.same(requeued?.dueAt, NOW, 'due at once')
  t.notOk(requeued && 'finishedAt' in requeued, 'no longer counted as finished (retention leaves it alone)')
  t.equal(requeued?.lastError, 'boom', 'the last error stays readable')
})

t.test('nHours widens or narrows the window; appId and organizationId narrow it to a tenant', async (t) => {
  const store = await seed(t)
  const repository = batchJobRepository(store)
  t.same(await retryFailedJobs(repository, { nHours: 2, appId: 'hr', organizationId: 'acme' }, null, NOW), {
    requeued: 1,
    message: '1 failed batch job will run again',
  })
  t.same(await retryFailedJobs(repository, { nHours: 72, appId: 'hr' }, null, NOW), {
    requeued: 2,
    message: '2 failed batch jobs will run again',
  })
  t.equal((await statusOf(store))['other-app'], 'failed/10', "another app's jobs are left alone")
  t.same(await retryFailedJobs(repository, { appId: 'hr', organizationId: 'other-org' }, null, NOW), {
    requeued: 0,
    message: 'No failed batch job found in the last 24 hours',
  })
})

t.test("a named user requeues only their own tenant's jobs, whatever the body names", async (t) => {
  const store = await seed(t)
  const repository = batchJobRepository(store)
  const salesUser = { appId: 'sales', organizationId: 'acme' }
  t.same(await retryFailedJobs(repository, { appId: 'hr', organizationId: 'acme' }, salesUser, NOW), {
    requeued: 0,
    message: 'No failed batch job found in the last 24 hours',
  })
  t.equal((await statusOf(store))['one-hour-ago'], 'failed/10', "the other tenant's jobs are left alone")
  t.same(
    await retryFailedJobs(repository, {}, salesUser, NOW),
    { requeued: 1, message: '1 failed batch job will run again' },
    "without a tenant in the body: the user's own",
  )
  t.equal((await statusOf(store))['other-app'], 'waiting/0')
})

t.test('the message says when nothing was found, naming the window', async (t) => {
  const store = await openTestStore(t)
  t.same(await retryFailedJobs(batchJobRepository(store), { nHours: 6 }, null, NOW), {
    requeued: 0,
    message: 'No failed batch job found in the last 6 hours',
  })
  t.equal(retryMessage(0, 0.5), 'No failed batch job found in the last 0.5 hours')
})

t.test('a window longer than dates reach starts at the epoch instead of an invalid date', async (t) => {
  t.same(windowStart(NOW, 1e300), new Date(0))
  t.same(windowStart(NOW, 24), new Date(NOW.getTime() - 24 * HOUR))
})
