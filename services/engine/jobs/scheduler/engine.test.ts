import t from 'tap'
import type { Store } from '../../../../store/port.js'
import { Collections, type StoredBatchJob, type StoredContext, type StoredModel } from '../../../../store/collections.js'
import { type TestClock, testClock } from '../../../testing/clock.js'
import { startService } from '../../../testing/harness.js'
import { waitUntil } from '../../../testing/wait.js'
import { dataCollectionName, insertModelRequest } from '../../../testing/models.js'
import { HR, startHrEngine, workflowClient } from '../../../testing/workflow.js'
import { batchJobRepository } from '../batch/repository.js'

/** Engines poll fast here, so a tick turns into a started process within a few dozen milliseconds. */
const FAST = { batchPollMs: 50 }
/** Half a second past an even second: the engines' clock starts here, and the tests move it. */
const T0 = '2026-01-05T08:00:00.500Z'

let nextVersion = 1

/** What the gateway's insertModel leaves for a live jobScheduler model: the version and its deploy job, due at the engine's now. */
async function insertJobScheduler(store: Store, clock: TestClock, modelID: string, schedules: unknown[]): Promise<string> {
  const now = clock.now()
  const version = nextVersion++
  await store.collection<StoredModel>(Collections.models).insertOne({
    modelID,
    type: 'jobScheduler',
    ...HR,
    version,
    updateDate: now.toISOString(),
    modelBody: { schedules },
    live: true,
  })
  const job = await batchJobRepository(store).enqueue({ kind: 'deploy', ...HR, payload: { modelID, version }, dueAt: now }, now)
  return job!.jobId
}

/** Inserts the version and waits until an engine deployed it (its schedules are what the engines fire from now on). */
async function deployJobScheduler(store: Store, clock: TestClock, modelID: string, schedules: unknown[]): Promise<StoredBatchJob | null> {
  const jobId = await insertJobScheduler(store, clock, modelID, schedules)
  return waitUntil(
    () => batchJobRepository(store).findByJobId(jobId),
    (job) => job?.status === 'done',
  )
}

function scheduledRuns(store: Store): Promise<StoredBatchJob[]> {
  return store
    .collection<StoredBatchJob>(Collections.batchJobs)
    .find({ kind: 'scheduledRun' }, { sort: { scheduleKey: 1 } })
    .toArray()
}

/** Waits until `count` scheduled runs were fired and every one finished (the worker may still be on the last one). */
async function settled(store: Store, count: number): Promise<StoredBatchJob[]> {
  return waitUntil(
    () => scheduledRuns(store),
    (runs) => runs.length >= count && runs.every((run) => run.status === 'done' || run.status === 'failed'),
  )
}

t.test(
  'a schedule that fires every 2 seconds starts processes with the given initiator, once per tick, until a version removes it',
  async (t) => {
    const clock = testClock(T0)
    const engine = await startHrEngine(t, FAST, { clock: clock.now })
    const { manager } = engine.users
    t.match(
      await deployJobScheduler(engine.store, clock, 'leave-reminders', [
        {
          id: 'every-2s',
          cron: '*/2 * * * * *',
          startProcess: { processId: 'leave-request', input: { days: 1, reason: 'Scheduled' }, initiatorUserId: manager.userId },
        },
      ]),
      { status: 'done' },
      'the deploy job ran',
    )
    t.same(await scheduledRuns(engine.store), [], 'nothing fires before the first tick')

    clock.advance(2_000) // 08:00:02.5: the engine's own poll fires the tick of 08:00:02
    t.equal((await settled(engine.store, 1)).length, 1, 'the first tick fired')
    clock.advance(2_000) // 08:00:04.5
    t.equal((await settled(engine.store, 2)).length, 2, 'the second tick fired')

    clock.advance(300)
    await deployJobScheduler(engine.store, clock, 'leave-reminders', [])
    clock.advance(4_000) // past the ticks of 08:00:06 and 08:00:08
    t.same(await engine.app.scheduler.fireDue(), [], 'the removed schedule fires no more')
    const runs = await settled(engine.store, 2)
    t.equal(runs.length, 2, 'one run per tick of the 4.8 seconds the schedule was deployed')

    const ticks = runs.map((run) => Date.parse(String(run.payload.tick)))
    t.same(
      ticks.map((tick) => new Date(tick).toISOString()),
      ['2026-01-05T08:00:02.000Z', '2026-01-05T08:00:04.000Z'],
      'on even seconds, every tick once, none skipped',
    )
    t.same(
      runs.map((run) => run.status),
      runs.map(() => 'done'),
      'every run done',
    )

    const started = await engine.store.collection<StoredContext>(Collections.contexts).find({ processId: 'leave-request' }).toArray()
    t.equal(started.length, runs.length, 'one process per run')
    t.same(
      started.map((context) => context.initiator),
      started.map(() => manager.userId),
      'each started as the initiator the schedule names',
    )
    t.match(started[0], { ...HR, processStatus: 'running', dataInstance: { days: 1, reason: 'Scheduled' } })
    t.equal(started[0]?.processInstance.tasks[0]?.userId, manager.userId, "the initiator's task is theirs")
    t.same(
      started.map((context) => context.processInstance.lastUpdate).sort(),
      ['2026-01-05T08:00:02.500Z', '2026-01-05T08:00:04.500Z'],
      "the runtime stamps the engine's clock",
    )
  },
)

t.test('a runFunction schedule runs an app-wide function standalone; an unknown function fails its job at once', async (t) => {
  const clock = testClock(T0)
  const engine = await startHrEngine(t, FAST, { clock: clock.now })
  await engine.store.collection<StoredModel>(Collections.models).insertOne({
    modelID: 'nightly-lib',
    type: 'functions',
    ...HR,
    version: 1,
    updateDate: clock.now().toISOString(),
    live: true,
    modelBody: {
      functions: {
        bookVat: {
          input: { type: 'object', properties: { amount: { type: 'number' } } },
          output: { type: 'object' },
          steps: [
            {
              data: 'insert',
              collection: 'Leave bookings',
              doc: '{ "businessKey": $uuid(), "amount": input.amount, "rate": $number($constant("vatRate")) }',
            },
          ],
        },
      },
    },
  })
  await deployJobScheduler(engine.store, clock, 'nightly', [
    { id: 'book', cron: '* * * * * *', runFunction: { functionId: 'bookVat', inputParams: { amount: 250 } } },
    { id: 'missing', cron: '* * * * * *', runFunction: { functionId: 'noSuchFunction' } },
  ])
  clock.advance(1_000)
  await settled(engine.store, 2)
  clock.advance(1_000)
  await settled(engine.store, 4)
  await deployJobScheduler(engine.store, clock, 'nightly', [])
  const runs = await settled(engine.store, 4)

  const booked = runs.filter((run) => run.payload.scheduleId === 'book')
  t.equal(booked.length, 2, 'the function schedule fired on each of the two ticks')
  t.same(
    booked.map((run) => run.status),
    booked.map(() => 'done'),
  )
  const bookings = await engine.store.collection(dataCollectionName(HR, 'leave-bookings')).find({ amount: 250 }).toArray()
  t.equal(bookings.length, booked.length, 'each run wrote what the function inserts')

  const missing = runs.filter((run) => run.payload.scheduleId === 'missing')
  t.equal(missing.length, 2, 'the broken schedule fired too')
  t.match(
    missing[0],
    { status: 'failed', tryCount: 1, lastError: 'wm3054: Function not found: noSuchFunction in app hr' },
    'no retries for what cannot succeed',
  )
})

t.test('two engines on one store: each tick starts one process', async (t) => {
  const clock = testClock(T0)
  const first = await startHrEngine(t, FAST, { clock: clock.now })
  const second = await startService(t, 'engine', { store: first.store, config: FAST, clock: clock.now })
  await deployJobScheduler(first.store, clock, 'busy', [
    {
      id: 'every-second',
      cron: '* * * * * *',
      startProcess: { processId: 'purchase', input: { item: 'Pen', amount: 1 }, initiatorUserId: first.users.employee.userId },
    },
  ])
  for (let tick = 1; tick <= 3; tick++) {
    clock.advance(1_000)
    // Both engines fire the tick at the same moment (their own polls race them as well).
    await Promise.all([first.app.scheduler.fireDue(), second.app.scheduler.fireDue()])
    await settled(first.store, tick)
  }
  await deployJobScheduler(first.store, clock, 'busy', [])
  const runs = await settled(first.store, 3)

  const ticks = runs.map((run) => String(run.payload.tick))
  t.equal(runs.length, 3, 'the schedule fired once per tick')
  t.equal(new Set(ticks).size, ticks.length, 'no tick fired twice')
  t.same(
    runs.map((run) => run.status),
    runs.map(() => 'done'),
  )
  t.equal(await first.store.collection(Collections.contexts).countDocuments({ processId: 'purchase' }), runs.length, 'one process per tick')
})

t.test(
  'a jobScheduler model inserted through the gateway is deployed by the engine; a version without schedules removes them',
  async (t) => {
    const engine = await startHrEngine(t, FAST)
    const gateway = workflowClient(t, (await startService(t, 'gateway', { store: engine.store })).url, 'gateway')
    const schedules = engine.store.collection(Collections.schedules)
    const insert = (edit?: (body: Record<string, unknown>) => void) =>
      gateway.call('insertModel', 'POST', '/model/insertModel', {
        body: insertModelRequest('hr-nightly', { ...HR, ...(edit ? { edit } : {}) }),
      })

    t.equal((await insert()).status, 200)
    const deployed = await waitUntil(
      () => schedules.find({ modelID: 'hr-nightly' }).toArray(),
      (found) => found.length === 1,
    )
    t.match(deployed, [{ _id: 'acme/hr:hr-nightly:vat-check', cron: '0 6 * * *', timezone: 'UTC', runFunction: { functionId: 'vatOf' } }])

    t.equal((await insert((body) => void (body.schedules = []))).status, 200)
    t.same(
      await waitUntil(
        () => schedules.find({ modelID: 'hr-nightly' }).toArray(),
        (found) => found.length === 0,
      ),
      [],
      'the empty list removed the schedule',
    )
    // The schedules are written before the deploy job is marked done: wait for the worker to finish it.
    const deploys = await waitUntil(
      () => engine.store.collection<StoredBatchJob>(Collections.batchJobs).find({ kind: 'deploy' }).toArray(),
      (jobs) => jobs.every((job) => job.status === 'done'),
    )
    t.same(
      deploys.map((job) => job.status),
      ['done', 'done'],
      'one deploy job per live version, both done',
    )
  },
)
