import { setImmediate as nextTurn } from 'node:timers/promises'
import t from 'tap'
import type { Store } from '../../../../store/port.js'
import type { StoredBatchJob } from '../../../../store/collections.js'
import { testClock } from '../../../testing/clock.js'
import { openTestStore, silentLogger } from '../../../testing/harness.js'
import { retryWaits } from '../../../testing/retries.js'
import { waitUntil } from '../../../testing/wait.js'
import { type BatchJobHandler, type BatchJobHandlers, PermanentJobError } from './handlers.js'
import { type BatchJobRepository, batchJobRepository, MAX_TRIES } from './repository.js'
import { BatchWorker, type BatchWorkerSettings } from './worker.js'

const T0 = new Date('2025-06-30T08:00:00.000Z')

const SETTINGS: BatchWorkerSettings = { backoffMs: 100, pollMs: 10, leaseMs: 1_000, retentionMs: 3_600_000, concurrency: 1 }

function worker(
  store: Store,
  handler: BatchJobHandler,
  options: {
    owner?: string
    now?: () => Date
    settings?: Partial<BatchWorkerSettings>
    repository?: BatchJobRepository
    kind?: StoredBatchJob['kind']
  } = {},
): BatchWorker {
  const handlers: BatchJobHandlers = new Map([[options.kind ?? 'deploy', handler]])
  return new BatchWorker({
    repository: options.repository ?? batchJobRepository(store),
    handlers,
    settings: { ...SETTINGS, ...options.settings },
    owner: options.owner ?? 'worker-a',
    log: silentLogger,
    ...(options.now ? { now: options.now } : {}),
  })
}

async function enqueue(store: Store, count: number, dueAt: Date = T0): Promise<StoredBatchJob[]> {
  const repository = batchJobRepository(store)
  await repository.ensureIndexes()
  const jobs: StoredBatchJob[] = []
  for (let i = 0; i < count; i++) {
    const job = await repository.enqueue({ kind: 'deploy', appId: 'hr', payload: { n: i }, dueAt }, dueAt)
    if (job) jobs.push(job)
  }
  return jobs
}

/** The repository of `store`, counting the worker's looks for due jobs: the sign that it polled. */
function countingLooks(store: Store): { repository: BatchJobRepository; looks: { count: number } } {
  const repository = batchJobRepository(store)
  const looks = { count: 0 }
  const claimDue = repository.claimDue.bind(repository)
  repository.claimDue = (...args) => {
    looks.count++
    return claimDue(...args)
  }
  return { repository, looks }
}

async function stored(store: Store, jobId: string): Promise<StoredBatchJob> {
  const job = await batchJobRepository(store).findByJobId(jobId)
  if (!job) throw new Error(`job ${jobId} is gone`)
  return job
}

t.test('two workers on one store never run the same job twice, and between them run every job', async (t) => {
  const store = await openTestStore(t)
  const jobs = await enqueue(store, 40)
  const clock = testClock(T0)
  const runs = new Map<string, string[]>()
  const recording =
    (owner: string): BatchJobHandler =>
    async (job) => {
      runs.set(job.jobId, [...(runs.get(job.jobId) ?? []), owner])
      // A handler that is not over at once: the other worker's claims come in between.
      await nextTurn()
    }
  const a = worker(store, recording('a'), { owner: 'a', now: clock.now, settings: { concurrency: 3 } })
  const b = worker(store, recording('b'), { owner: 'b', now: clock.now, settings: { concurrency: 3 } })
  const [ranByA, ranByB] = await Promise.all([a.runDue(), b.runDue()])

  t.equal(ranByA + ranByB, 40, 'forty runs in all')
  t.ok(ranByA > 0 && ranByB > 0, `both workers took jobs (a ${ranByA}, b ${ranByB})`)
  t.same(
    jobs.filter((job) => runs.get(job.jobId)?.length !== 1).map((job) => job.jobId),
    [],
    'every job ran exactly once',
  )
  t.equal(await store.collection('batchJobs').countDocuments({ status: 'done' }), 40, 'all are done')
})

t.test('a failing job retries with exponential backoff from BATCH_BACKOFF_MS and is failed at its tenth try', async (t) => {
  const store = await openTestStore(t)
  const [job] = await enqueue(store, 1)
  const clock = testClock(T0)
  let tries = 0
  const failing = worker(
    store,
    async () => {
      tries++
      throw new Error(`boom ${tries}`)
    },
    { now: clock.now },
  )

  const waits = await retryWaits(t, failing, clock, MAX_TRIES, async (attempt) => {
    const after = await stored(store, job!.jobId)
    t.match(after, { status: 'retrying', tryCount: attempt, lastError: `boom ${attempt}` })
    t.same(after.lastFailureAt, clock.now())
    return after.dueAt
  })
  t.same(waits, [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600], 'each wait doubles the previous one')

  t.equal(await failing.runDue(), 1, 'the tenth try runs')
  const failed = await stored(store, job!.jobId)
  t.match(failed, { status: 'failed', tryCount: 10, lastError: 'boom 10' })
  t.same(failed.finishedAt, clock.now())
  t.notOk('leaseOwner' in failed, 'the lease is released')
  clock.advance(10 * 60_000)
  t.equal(await failing.runDue(), 0, 'a failed job never runs again by itself')
  t.equal(tries, 10)
})

t.test('a failure no retry can cure fails the job at once', async (t) => {
  const store = await openTestStore(t)
  const [job] = await enqueue(store, 1)
  const invalid = worker(
    store,
    async () => {
      throw new PermanentJobError('modelBody.schedules must be an array')
    },
    { now: testClock(T0).now },
  )
  await invalid.runDue()
  t.match(await stored(store, job!.jobId), { status: 'failed', tryCount: 1, lastError: 'modelBody.schedules must be an array' })
})

t.test("a crashed worker's lease lapses and the job runs again elsewhere; the crashed one cannot overwrite the outcome", async (t) => {
  const store = await openTestStore(t)
  const [job] = await enqueue(store, 1)
  const clock = testClock(T0)
  const repository = batchJobRepository(store)
  // Worker "crashed" claims the job and never reports back.
  const claimed = await repository.claimDue(['deploy'], 'crashed', clock.now(), SETTINGS.leaseMs)
  t.equal(claimed?.jobId, job!.jobId)

  let ran = 0
  const survivor = worker(store, async () => void ran++, { owner: 'survivor', now: clock.now })
  clock.advance(SETTINGS.leaseMs - 1)
  t.equal(await survivor.runDue(), 0, 'not while the lease holds')
  clock.advance(2)
  t.equal(await survivor.runDue(), 1, 'once it lapsed')
  t.equal(ran, 1)
  const done = await stored(store, job!.jobId)
  t.match(done, { status: 'done', tryCount: 1, lastError: /lease lapsed/ }, 'the lost try counts')
  t.equal(await repository.complete(claimed!, 'crashed', clock.now()), false, 'the crashed worker cannot complete it afterwards')
  t.equal(await repository.recordFailure(claimed!, 'crashed', { status: 'failed' }, 'late', clock.now()), false, 'nor fail it')
  t.match(await stored(store, job!.jobId), { status: 'done' })
})

t.test('a job whose tenth try ended with a lapsed lease is failed without running again', async (t) => {
  const store = await openTestStore(t)
  const [job] = await enqueue(store, 1)
  const clock = testClock(T0)
  await store.collection('batchJobs').updateOne({ jobId: job!.jobId }, { $set: { tryCount: MAX_TRIES - 1 } })
  await batchJobRepository(store).claimDue(['deploy'], 'crashed', clock.now(), SETTINGS.leaseMs)
  clock.advance(SETTINGS.leaseMs + 1)
  let ran = 0
  t.equal(await worker(store, async () => void ran++, { now: clock.now }).runDue(), 0)
  t.equal(ran, 0)
  t.match(await stored(store, job!.jobId), { status: 'failed', tryCount: MAX_TRIES, lastError: /lease lapsed/ })
})

t.test('a handler that outlives its lease keeps the job: the worker renews the lease while it runs', async (t) => {
  const store = await openTestStore(t)
  const [job] = await enqueue(store, 1)
  const clock = testClock(T0)
  const repository = batchJobRepository(store)
  let thief: StoredBatchJob | null = null
  const slow = worker(
    store,
    async () => {
      // Twice the lease in all, in steps shorter than it, each waiting for the renewal that follows it.
      for (let step = 0; step < 3; step++) {
        clock.advance(40)
        const renewedUntil = clock.now().getTime() + 60
        await waitUntil(
          () => stored(store, job!.jobId),
          (running) => (running.leaseUntil?.getTime() ?? 0) >= renewedUntil,
        )
      }
      thief = await repository.claimLapsed(['deploy'], 'thief', clock.now(), 60)
    },
    { now: clock.now, settings: { leaseMs: 60 } },
  )
  await slow.runDue()
  t.equal(thief, null, 'no other worker could take it over')
  t.match(await stored(store, job!.jobId), { status: 'done', tryCount: 0 })
})

t.test('jobs of a kind this engine has no handler for are left for others', async (t) => {
  const store = await openTestStore(t)
  await batchJobRepository(store).enqueue({ kind: 'scheduledRun', appId: 'hr', payload: {}, dueAt: T0 }, T0)
  t.equal(await worker(store, async () => undefined, { now: testClock(T0).now }).runDue(), 0)
  t.equal(await store.collection('batchJobs').countDocuments({ status: 'waiting' }), 1)
})

t.test('finished jobs are removed once the retention window has passed, and only those', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  const hour = 3_600_000
  const collection = store.collection('batchJobs')
  const base = { kind: 'deploy', appId: 'hr', payload: {}, tryCount: 0, dueAt: T0, createdAt: T0, updatedAt: T0 }
  await collection.insertMany([
    { ...base, jobId: 'old-done', status: 'done', finishedAt: new Date(T0.getTime() - 2 * hour) },
    { ...base, jobId: 'old-failed', status: 'failed', finishedAt: new Date(T0.getTime() - 2 * hour) },
    { ...base, jobId: 'recent-done', status: 'done', finishedAt: new Date(T0.getTime() - hour / 2) },
    { ...base, jobId: 'old-waiting', status: 'waiting', createdAt: new Date(T0.getTime() - 5 * hour) },
  ])
  const removed = await worker(store, async () => undefined, { now: clock.now, settings: { retentionMs: hour } }).removeExpired()
  t.equal(removed, 2)
  const left = (await collection.find({}).toArray()).map((job) => job.jobId).sort()
  t.same(left, ['old-waiting', 'recent-done'])
})

t.test('the poll loop picks up jobs enqueued after it started, and a stopped worker claims nothing', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  let ran = 0
  const counting = countingLooks(store)
  const polling = worker(store, async () => void ran++, { now: clock.now, repository: counting.repository, settings: { pollMs: 20 } })
  polling.start()
  await waitUntil(
    () => counting.looks.count,
    (count) => count >= 2,
  )
  await enqueue(store, 3)
  t.equal(
    await waitUntil(
      () => ran,
      (count) => count >= 3,
      2_000,
      10,
    ),
    3,
    'the jobs ran without a call to runDue',
  )
  await polling.stop()
  const [late] = await enqueue(store, 1)
  // A worker polling the same store for another kind: once it looked three times, the stopped one would have looked too.
  const witness = countingLooks(store)
  const polls = worker(store, async () => undefined, {
    now: clock.now,
    repository: witness.repository,
    kind: 'scheduledRun',
    settings: { pollMs: 20 },
  })
  polls.start()
  await waitUntil(
    () => witness.looks.count,
    (count) => count >= 3,
  )
  await polls.stop()
  t.equal(ran, 3, 'a stopped worker claims nothing')
  t.match(await stored(store, late!.jobId), { status: 'waiting' })
})
