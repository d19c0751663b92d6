import t from 'tap'
import { openStore } from '../../../../store/open.js'
import type { Store } from '../../../../store/port.js'
import { scheduleDocumentId } from '../../../../store/tenant.js'
import { Collections, type StoredBatchJob, type StoredModel, type StoredSchedule } from '../../../../store/collections.js'
import { type TestClock, testClock } from '../../../testing/clock.js'
import { openTestStore, silentLogger, tempDir } from '../../../testing/harness.js'
import type { BatchJobHandlers } from '../batch/handlers.js'
import { batchJobRepository } from '../batch/repository.js'
import { BatchWorker } from '../batch/worker.js'
import { scheduleRepository } from './repository.js'
import { deployHandler, Scheduler } from './service.js'

const T0 = new Date('2025-06-30T08:00:00.000Z')
const APP = { appId: 'hr', organizationId: 'acme' }

function at(offsetMs: number): Date {
  return new Date(T0.getTime() + offsetMs)
}

let nextVersion = 1

/** Stores a live jobScheduler model version and the deploy job the gateway's insertModel creates with it. */
async function insertSchedulerModel(store: Store, modelID: string, schedules: unknown[], now: Date): Promise<StoredBatchJob> {
  const version = nextVersion++
  const model: StoredModel = {
    modelID,
    type: 'jobScheduler',
    ...APP,
    version,
    updateDate: now.toISOString(),
    modelBody: { schedules },
    live: true,
  }
  await store.collection<StoredModel>(Collections.models).insertOne(model)
  const repository = batchJobRepository(store)
  await repository.ensureIndexes()
  const job = await repository.enqueue({ kind: 'deploy', ...APP, payload: { modelID, version }, dueAt: now }, now)
  return job!
}

function deployWorker(store: Store, clock: TestClock): BatchWorker {
  const handlers: BatchJobHandlers = new Map([['deploy', deployHandler(scheduleRepository(store))]])
  return new BatchWorker({
    repository: batchJobRepository(store),
    handlers,
    settings: { backoffMs: 100, pollMs: 10, leaseMs: 1_000, retentionMs: 3_600_000, concurrency: 1 },
    owner: 'deployer',
    log: silentLogger,
    now: clock.now,
  })
}

function scheduler(store: Store, clock: TestClock): Scheduler {
  return new Scheduler({
    schedules: scheduleRepository(store),
    batchJobs: batchJobRepository(store),
    pollMs: 10,
    log: silentLogger,
    now: clock.now,
  })
}

async function deploy(store: Store, clock: TestClock, modelID: string, schedules: unknown[]): Promise<StoredBatchJob | null> {
  const job = await insertSchedulerModel(store, modelID, schedules, clock.now())
  await deployWorker(store, clock).runDue()
  return batchJobRepository(store).findByJobId(job.jobId)
}

async function storedSchedules(store: Store, modelID: string): Promise<StoredSchedule[]> {
  return scheduleRepository(store).ofModel(APP, modelID)
}

async function scheduledRuns(store: Store): Promise<StoredBatchJob[]> {
  return batchJobRepository(store).find({ kind: 'scheduledRun' })
}

const EVERY_2_SECONDS = {
  id: 'tick',
  cron: '*/2 * * * * *',
  startProcess: { processId: 'leave-request', input: { days: 1 }, initiatorUserId: 'u-1' },
}
const NIGHTLY = { id: 'vat-check', cron: '0 6 * * *', timezone: 'UTC', runFunction: { functionId: 'vatOf', inputParams: { amount: 100 } } }

t.test('a deploy job registers the schedules of its jobScheduler model', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  const job = await deploy(store, clock, 'nightly', [EVERY_2_SECONDS, NIGHTLY])
  t.match(job, { status: 'done', tryCount: 0 })
  const schedules = await storedSchedules(store, 'nightly')
  t.same(
    schedules.map((schedule) => schedule.scheduleId),
    ['tick', 'vat-check'],
  )
  t.match(schedules[0], {
    _id: scheduleDocumentId(APP, 'nightly', 'tick'),
    ...APP,
    modelID: 'nightly',
    cron: '*/2 * * * * *',
    startProcess: EVERY_2_SECONDS.startProcess,
    lastFiredAt: T0,
  })
  t.match(schedules[1], { timezone: 'UTC', runFunction: NIGHTLY.runFunction })
  t.notOk('startProcess' in schedules[1]!, 'only the action the model gives')
  t.same(
    [schedules[0]?.nextTickAt, schedules[1]?.nextTickAt],
    [at(2_000), new Date('2025-07-01T06:00:00.000Z')],
    'each knows its first tick',
  )
  const repository = scheduleRepository(store)
  t.same(await repository.due(at(1_999)), [], 'no schedule is due before its first tick')
  t.same(
    (await repository.due(at(2_000))).map((schedule) => schedule.scheduleId),
    ['tick'],
    'only the schedule whose tick came is read',
  )
})

t.test(
  'a later version replaces the schedules: changed ones rewritten, dropped ones removed, unchanged timing keeps lastFiredAt',
  async (t) => {
    const store = await openTestStore(t)
    const clock = testClock(T0)
    await deploy(store, clock, 'nightly', [EVERY_2_SECONDS, NIGHTLY, { ...NIGHTLY, id: 'weekly', cron: '0 7 * * 1' }])
    clock.set(at(10_000))
    await scheduler(store, clock).fireDue()
    t.same((await storedSchedules(store, 'nightly'))[0]?.lastFiredAt, at(10_000), 'tick fired at +10 s')

    clock.set(at(11_000))
    const replaced = await deploy(store, clock, 'nightly', [
      { ...EVERY_2_SECONDS, startProcess: { processId: 'purchase', input: { item: 'pen', amount: 1 } } },
      { ...NIGHTLY, cron: '30 6 * * *' },
    ])
    t.match(replaced, { status: 'done' })
    const [tick, vat, ...rest] = await storedSchedules(store, 'nightly')
    t.same(rest, [], 'the schedule the new version dropped is removed')
    t.match(tick, { startProcess: { processId: 'purchase' }, lastFiredAt: at(10_000) }, 'same cron: action replaced, lastFiredAt kept')
    t.same(
      tick && 'startProcess' in tick ? tick.startProcess : undefined,
      { processId: 'purchase', input: { item: 'pen', amount: 1 } },
      'nothing of the old action is left',
    )
    t.match(vat, { cron: '30 6 * * *', lastFiredAt: at(11_000) }, 'new cron: counts from the deploy, so no earlier tick fires')
  },
)

t.test('a version with an empty schedule list removes every schedule of the model, and only of that model', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [EVERY_2_SECONDS, NIGHTLY])
  await deploy(store, clock, 'other', [NIGHTLY])
  t.match(await deploy(store, clock, 'nightly', []), { status: 'done' })
  t.same(await storedSchedules(store, 'nightly'), [])
  t.equal((await storedSchedules(store, 'other')).length, 1)
  clock.set(at(60_000))
  await scheduler(store, clock).fireDue()
  t.same(await scheduledRuns(store), [], 'removed schedules no longer fire')
})

t.test('an invalid schedule fails the deploy job at once and changes nothing', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [NIGHTLY])
  const cases: Array<[unknown[], RegExp]> = [
    [[{ ...NIGHTLY, cron: 'every day' }], /^modelBody\.schedules\[0\]\.cron must have five fields, or six with a leading seconds field/],
    [[{ ...NIGHTLY, cron: '61 * * * *' }], /^modelBody\.schedules\[0\]\.cron is not a valid cron expression/],
    [[{ ...NIGHTLY, timezone: 'Mars/Olympus' }], /^modelBody\.schedules\[0\]\.timezone is not a known time zone: Mars\/Olympus/],
    [[NIGHTLY, { ...EVERY_2_SECONDS, id: 'vat-check' }], /^modelBody\.schedules\[1\]\.id repeats schedule id "vat-check"/],
    [
      [{ id: 'both', cron: '* * * * *', startProcess: EVERY_2_SECONDS.startProcess, runFunction: NIGHTLY.runFunction }],
      /^modelBody\.schedules\[0\] must have exactly one of startProcess and runFunction/,
    ],
    [[{ ...EVERY_2_SECONDS, startProcess: { processId: 'p' } }], /^modelBody\.schedules\[0\]\.startProcess\.input must be an object/],
  ]
  for (const [schedules, message] of cases) {
    const job = await deploy(store, clock, 'nightly', schedules)
    t.match(job, { status: 'failed', tryCount: 1, lastError: message }, String(message))
  }
  t.same(
    (await storedSchedules(store, 'nightly')).map((schedule) => schedule.cron),
    [NIGHTLY.cron],
    'the deployed schedules are untouched',
  )
})

t.test('a deploy job of an older version deploys the latest live one; a draft is never deployed', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  const old = await insertSchedulerModel(store, 'nightly', [NIGHTLY], clock.now())
  await insertSchedulerModel(store, 'nightly', [EVERY_2_SECONDS], clock.now())
  await store.collection<StoredModel>(Collections.models).insertOne({
    modelID: 'nightly',
    type: 'jobScheduler',
    ...APP,
    version: 99,
    updateDate: T0.toISOString(),
    modelBody: { schedules: [] },
    live: false,
  })
  const worker = deployWorker(store, clock)
  await worker.runDue()
  t.match(await batchJobRepository(store).findByJobId(old.jobId), { status: 'done' })
  t.same(
    (await storedSchedules(store, 'nightly')).map((schedule) => schedule.scheduleId),
    ['tick'],
    'the latest live version wins whatever order the jobs ran in',
  )
})

t.test('every engine sees every tick, yet each tick fires once: two schedulers on one store', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [EVERY_2_SECONDS])
  const a = scheduler(store, clock)
  const b = scheduler(store, clock)
  let firedByA = 0
  let firedByB = 0
  for (let ms = 0; ms <= 10_000; ms += 500) {
    clock.set(at(ms))
    const [fromA, fromB] = await Promise.all([a.fireDue(), b.fireDue()])
    firedByA += fromA.length
    firedByB += fromB.length
  }
  const runs = await scheduledRuns(store)
  t.same(
    runs.map((run) => run.payload.tick),
    [2, 4, 6, 8, 10].map((s) => at(s * 1_000).toISOString()),
    'ticks +2 s … +10 s, once each',
  )
  t.equal(firedByA + firedByB, 5, 'one engine fired each')
  t.same(
    runs.map((run) => run.scheduleKey),
    runs.map((run) => `acme/hr:nightly:tick:${String(run.payload.tick)}`),
    'the key names the tenant (organization and app)',
  )
  t.match(runs[0], {
    status: 'waiting',
    ...APP,
    payload: { modelID: 'nightly', scheduleId: 'tick', startProcess: EVERY_2_SECONDS.startProcess },
  })
})

t.test('after downtime the missed ticks collapse into one catch-up run, then the schedule keeps its rhythm', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [EVERY_2_SECONDS, NIGHTLY])
  clock.set(at(3 * 86_400_000 + 1_000)) // three days later, between two ticks
  const engine = scheduler(store, clock)
  const fired = await engine.fireDue()
  t.same(
    fired.map((job) => [job.payload.scheduleId, job.payload.tick]).sort(),
    [
      ['tick', at(3 * 86_400_000).toISOString()],
      ['vat-check', '2025-07-03T06:00:00.000Z'],
    ],
    'one run per schedule: its latest missed tick',
  )
  t.same(await engine.fireDue(), [], 'nothing more at the same moment')
  clock.set(at(3 * 86_400_000 + 2_000))
  t.same(
    (await engine.fireDue()).map((job) => job.payload.tick),
    [at(3 * 86_400_000 + 2_000).toISOString()],
    'the next tick on time',
  )
  t.same(
    (await storedSchedules(store, 'nightly')).map((schedule) => schedule.nextTickAt),
    [at(3 * 86_400_000 + 4_000), new Date('2025-07-04T06:00:00.000Z')],
    'and each schedule knows its next one',
  )
})

t.test('a next tick that came without a tick to fire (another engine fired it) is corrected, not fired again', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [EVERY_2_SECONDS])
  clock.set(at(2_000))
  const engine = scheduler(store, clock)
  t.equal((await engine.fireDue()).length, 1)
  await store
    .collection<StoredSchedule>(Collections.schedules)
    .updateOne({ _id: scheduleDocumentId(APP, 'nightly', 'tick') }, { $set: { nextTickAt: at(2_000) } })
  clock.set(at(2_500))
  t.same(await engine.fireDue(), [], 'the tick already fired does not fire again')
  t.same((await storedSchedules(store, 'nightly'))[0]?.nextTickAt, at(4_000), 'the next tick is set right')
  t.equal((await scheduledRuns(store)).length, 1)
})

t.test('a cron that never fires again is deployed but never read by the scheduler', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock(T0)
  await deploy(store, clock, 'nightly', [{ ...NIGHTLY, cron: '0 0 30 2 *' }])
  const [schedule] = await storedSchedules(store, 'nightly')
  t.notOk(schedule && 'nextTickAt' in schedule, 'no next tick (30 February)')
  t.same(await scheduleRepository(store).due(at(400 * 86_400_000)), [])
})

t.test('a schedule in a time zone fires at its local time', async (t) => {
  const store = await openTestStore(t)
  const clock = testClock('2025-06-30T00:00:00.000Z')
  await deploy(store, clock, 'nightly', [{ ...NIGHTLY, timezone: 'Europe/Berlin' }])
  const engine = scheduler(store, clock)
  clock.set(new Date('2025-06-30T03:59:59.999Z'))
  t.same(await engine.fireDue(), [], 'not before 06:00 in Berlin')
  clock.set(new Date('2025-06-30T04:00:00.000Z'))
  t.same(
    (await engine.fireDue()).map((job) => job.payload.tick),
    ['2025-06-30T04:00:00.000Z'],
    '06:00 Berlin summer time is 04:00 UTC',
  )
})

t.test('schedules survive a restart: a new engine on the reopened store fires them', async (t) => {
  const dataDir = tempDir(t, 'workflow-restart-')
  const clock = testClock(T0)
  const first = await openStore({ dataDir })
  await deploy(first, clock, 'nightly', [EVERY_2_SECONDS])
  await first.close()

  const reopened = await openStore({ dataDir })
  t.teardown(() => reopened.close())
  clock.set(at(2_000))
  const fired = await scheduler(reopened, clock).fireDue()
  t.same(
    fired.map((job) => job.scheduleKey),
    [`acme/hr:nightly:tick:${at(2_000).toISOString()}`],
  )
})
