import { setTimeout as sleep } from 'node:timers/promises'
import t from 'tap'
import type { Store } from '../../../store/port.js'
import { Collections, type StoredBatchJob, type StoredContext, type StoredModel } from '../../../store/collections.js'
import { startService } from '../../testing/harness.js'
import { waitUntil } from '../../testing/wait.js'
import { dataCollectionName, insertModelRequest } from '../../testing/models.js'
import { HR, startHrEngine, workflowClient } from '../../testing/workflow.js'
import { batchJobRepository } from '../batch/repository.js'

/** Engines poll fast here, so a tick turns into a started process within a few dozen milliseconds. */
const FAST = { batchPollMs: 50 }

let nextVersion = 1

/** What the gateway's insertModel leaves for a live jobScheduler model: the version and its deploy job. */
async function insertJobScheduler(store: Store, modelID: string, schedules: unknown[]): Promise<string> {
  const now = new Date()
  const version = nextVersion++
  await store.collection<StoredModel>(Collections.models).insertOne({
    modelID, type: 'jobScheduler', ...HR, version, updateDate: now.toISOString(), modelBody: { schedules }, live: true,
  })
  const job = await batchJobRepository(store).enqueue({ kind: 'deploy', ...HR, payload: { modelID, version }, dueAt: now }, now)
  return job!.jobId
}

function scheduledRuns(store: Store): Promise<StoredBatchJob[]> {
  return store.collection<StoredBatchJob>(Collections.batchJobs).find({ kind: 'scheduledRun' }, { sort: { scheduleKey: 1 } }).toArray()
}

/** Waits until every scheduled run fired so far has finished (the worker may still be on the last one). */
async function settled(store: Store): Promise<StoredBatchJob[]> {
  return waitUntil(() => scheduledRuns(store), (runs) => runs.every((run) => run.status === 'done' || run.status === 'failed'))
}

t.test('a schedule that fires every 2 seconds starts processes with the given initiator', async (t) => {
  const engine = await startHrEngine(t, FAST)
  const { manager } = engine.users
  const deployJob = await insertJobScheduler(engine.store, 'leave-reminders', [
    { id: 'every-2s', cron: '*/2 * * * * *', startProcess: { processId: 'leave-request', input: { days: 1, reason: 'Scheduled' }, initiatorUserId: manager.userId } },
  ])
  await sleep(4_300)
  // Stop firing before counting: the schedule is removed by its model's next version.
  await insertJobScheduler(engine.store, 'leave-reminders', [])
  await sleep(300)
  const runs = await settled(engine.store)

  t.match(await batchJobRepository(engine.store).findByJobId(deployJob), { status: 'done' }, 'the deploy job ran')
  t.ok(runs.length >= 2 && runs.length <= 3, `fired on each 2-second tick of 4.3 seconds (${runs.length} runs)`)
  const ticks = runs.map((run) => Date.parse(String(run.payload.tick)))
  t.ok(ticks.every((tick) => tick % 2_000 === 0), 'on even seconds')
  t.ok(ticks.slice(1).every((tick, index) => tick - ticks[index]! === 2_000), 'every tick once, none skipped')
  t.same(runs.map((run) => run.status), runs.map(() => 'done'), 'every run done')

  const started = await engine.store.collection<StoredContext>(Collections.contexts).find({ processId: 'leave-request' }).toArray()
  t.equal(started.length, runs.length, 'one process per run')
  t.same(started.map((context) => context.initiator), started.map(() => manager.userId), 'each started as the initiator the schedule names')
  t.match(started[0], { ...HR, processStatus: 'running', dataInstance: { days: 1, reason: 'Scheduled' } })
  t.equal(started[0]?.processInstance.tasks[0]?.userId, manager.userId, "the initiator's task is theirs")
})

t.test('a runFunction schedule runs an app-wide function standalone; an unknown function fails its job at once', async (t) => {
  const engine = await startHrEngine(t, FAST)
  await engine.store.collection<StoredModel>(Collections.models).insertOne({
    modelID: 'nightly-lib', type: 'functions', ...HR, version: 1, updateDate: new Date().toISOString(), live: true,
    modelBody: {
      functions: {
        bookVat: {
          input: { type: 'object', properties: { amount: { type: 'number' } } },
          output: { type: 'object' },
          steps: [{ data: 'insert', collection: 'Leave bookings', doc: '{ "businessKey": $uuid(), "amount": input.amount, "rate": $number($constant("vatRate")) }' }],
        },
      },
    },
  })
  await insertJobScheduler(engine.store, 'nightly', [
    { id: 'book', cron: '* * * * * *', runFunction: { functionId: 'bookVat', inputParams: { amount: 250 } } },
    { id: 'missing', cron: '* * * * * *', runFunction: { functionId: 'noSuchFunction' } },
  ])
  await sleep(2_500)
  await insertJobScheduler(engine.store, 'nightly', [])
  await sleep(300)
  const runs = await settled(engine.store)

  const booked = runs.filter((run) => run.payload.scheduleId === 'book')
  t.ok(booked.length >= 1, `the function schedule fired (${booked.length} runs)`)
  t.same(booked.map((run) => run.status), booked.map(() => 'done'))
  const bookings = await engine.store.collection(dataCollectionName(HR.appId, 'leave-bookings')).find({ amount: 250 }).toArray()
  t.equal(bookings.length, booked.length, 'each run wrote what the function inserts')

  const missing = runs.filter((run) => run.payload.scheduleId === 'missing')
  t.ok(missing.length >= 1, 'the broken schedule fired too')
  t.match(missing[0], { status: 'failed', tryCount: 1, lastError: 'wm3054: Function not found: noSuchFunction in app hr' }, 'no retries for what cannot succeed')
})

t.test('two engines on one store: each tick starts one process', async (t) => {
  const first = await startHrEngine(t, FAST)
  await startService(t, 'engine', { store: first.store, config: FAST })
  await insertJobScheduler(first.store, 'busy', [
    { id: 'every-second', cron: '* * * * * *', startProcess: { processId: 'purchase', input: { item: 'Pen', amount: 1 }, initiatorUserId: first.users.employee.userId } },
  ])
  await sleep(3_500)
  await insertJobScheduler(first.store, 'busy', [])
  await sleep(300)
  const runs = await settled(first.store)

  const ticks = runs.map((run) => String(run.payload.tick))
  t.ok(runs.length >= 2, `the schedule fired (${runs.length} runs)`)
  t.equal(new Set(ticks).size, ticks.length, 'no tick fired twice')
  t.same(runs.map((run) => run.status), runs.map(() => 'done'))
  t.equal(await first.store.collection(Collections.contexts).countDocuments({ processId: 'purchase' }), runs.length, 'one process per tick')
})

t.test('a jobScheduler model inserted through the gateway is deployed by the engine; a version without schedules removes them', async (t) => {
  const engine = await startHrEngine(t, FAST)
  const gateway = workflowClient(t, (await startService(t, 'gateway', { store: engine.store })).url, 'gateway')
  const schedules = engine.store.collection(Collections.schedules)
  const insert = (edit?: (body: Record<string, unknown>) => void) =>
    gateway.call('insertModel', 'POST', '/model/insertModel', { body: insertModelRequest('hr-nightly', { ...HR, ...(edit ? { edit } : {}) }) })

  t.equal((await insert()).status, 200)
  const deployed = await waitUntil(() => schedules.find({ modelID: 'hr-nightly' }).toArray(), (found) => found.length === 1)
  t.match(deployed, [{ _id: 'hr:hr-nightly:vat-check', cron: '0 6 * * *', timezone: 'UTC', runFunction: { functionId: 'vatOf' } }])

  t.equal((await insert((body) => void (body.schedules = []))).status, 200)
  t.same(await waitUntil(() => schedules.find({ modelID: 'hr-nightly' }).toArray(), (found) => found.length === 0), [], 'the empty list removed the schedule')
  const deploys = await engine.store.collection<StoredBatchJob>(Collections.batchJobs).find({ kind: 'deploy' }).toArray()
  t.same(deploys.map((job) => job.status), ['done', 'done'], 'one deploy job per live version, both done')
})
