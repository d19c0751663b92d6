/**
 * Purging ended instances through the gateway (docs/reference/lifecycle.md#purging-ended-instances):
 * `POST /external/process/purge` removes one ended instance or a filter's, with everything kept for
 * them, and HISTORY_RETENTION_DAYS removes them in the background once, across engines.
 */
import { Readable } from 'node:stream'
import t from 'tap'
import type { PurgeResult, Session } from '../../openapi/generated/schemas.js'
import { testClock } from '../../services/testing/clock.js'
import { startService } from '../../services/testing/harness.js'
import { waitUntil } from '../../services/testing/wait.js'
import { HR } from '../../services/testing/workflow.js'
import { notificationRecordOf, storedActivities } from '../../services/testing/instance-store.js'
import { Collections, type StoredBatchJob, type StoredContext } from '../../store/collections.js'
import type { Store } from '../../store/port.js'
import { type ControlStack, startControlStack } from './stack.js'

const idOf = (session: Session) => session.context.processInstance.processInstanceId
const DAY_MS = 24 * 3_600_000

/**
 * What the store keeps for an instance: its context, activities, notification record (the context's
 * view, or one stored apart), the records stored apart and its task locks.
 */
async function keptFor(store: Store, processInstanceId: string) {
  return {
    context: await store.collection(Collections.contexts).countDocuments({ _id: processInstanceId }),
    // The records in the instance's own log and those in `activities` (a file's upload), store/activity-log.ts.
    activities: (await storedActivities(store, processInstanceId)).length,
    collectedActivities: await store.collection(Collections.activities).countDocuments({ processInstanceId }),
    notification: (await notificationRecordOf(store, processInstanceId)) ? 1 : 0,
    storedNotifications: await store.collection(Collections.notifications).countDocuments({ _id: processInstanceId }),
    locks: await store.collection(Collections.taskLocks).countDocuments({ processInstanceId }),
  }
}

function purge(stack: ControlStack, body: object, as = stack.users.admin) {
  return stack.send<PurgeResult>('purgeProcessInstances', 'POST', '/external/process/purge', { as, body: { ...HR, ...body } })
}

t.test('an admin purges one ended instance with its activities, notification, locks and file bytes; dryRun removes nothing', async (t) => {
  const stack = await startControlStack(t)
  const { store } = stack
  const ended = idOf(await stack.startCompletedLeave())
  // A file of the instance and a stray lock, so that their removal shows.
  const file = await store.files.put(Readable.from(['payslip']), { fileName: 'payslip.txt', contentType: 'text/plain' })
  const record = { id: 'f1', storageHandle: file.storageHandle, label: 'Payslip', fileName: 'payslip.txt', fileType: 'text/plain' }
  await store.collection<StoredContext>(Collections.contexts).updateOne({ _id: ended }, { $set: { 'processInstance.files': [record] } })
  await store.collection(Collections.taskLocks).insertOne({ _id: 'stray', processInstanceId: ended, userId: 'x', expiresAt: new Date() })
  // An activity record written apart from a change (as a file's download writes one), beside those in the instance's log.
  await store
    .collection(Collections.activities)
    .insertOne({ processInstanceId: ended, timeStamp: new Date().toISOString(), type: 'fileDownload', userId: 'x' })
  // A record stored apart from a change (as POST /notify writes one), so that its removal shows too.
  await store.collection(Collections.notifications).insertOne({ _id: ended, ...HR, eventType: 'Assigned', informList: [], onUs: false })
  const before = await keptFor(store, ended)
  t.ok(before.activities > 1 && before.collectedActivities === 1 && before.notification === 1 && before.storedNotifications === 1)
  t.equal(before.locks, 1)

  const dry = await purge(stack, { processInstanceId: ended, dryRun: true })
  t.same(dry.body.data, { purged: 1, processInstanceIds: [ended], more: false, dryRun: true })
  t.same(await keptFor(store, ended), before, 'a dry run removes nothing')

  const done = await purge(stack, { processInstanceId: ended })
  t.same(done.body.data, { purged: 1, processInstanceIds: [ended], more: false, dryRun: false })
  t.same(await keptFor(store, ended), {
    context: 0,
    activities: 0,
    collectedActivities: 0,
    notification: 0,
    storedNotifications: 0,
    locks: 0,
  })
  t.equal(await store.files.get(file.storageHandle), null, "the file's bytes are gone")
  const read = await stack.send('getProcessStatus', 'GET', `/process/${ended}`, { as: stack.users.admin })
  t.equal(read.status, 404)
})

t.test('purge refuses what it may not remove and changes nothing', async (t) => {
  const stack = await startControlStack(t)
  const running = idOf(await stack.startLeave())
  const ended = idOf(await stack.startCompletedLeave())
  const failed = idOf(await stack.startFailedLeave())

  t.match((await purge(stack, { processInstanceId: running })).body, { status: 'error', error: { code: 'wm3141' } }, 'running: 409')
  t.match((await purge(stack, { processInstanceId: failed })).body, { error: { code: 'wm3141' } }, 'failed is not ended: 409')
  t.equal((await purge(stack, { processInstanceId: running })).status, 409)
  t.equal((await purge(stack, { processInstanceId: 'no-such-instance' })).status, 404)
  const anonymous = await stack.send('purgeProcessInstances', 'POST', '/external/process/purge', {
    body: { ...HR, processInstanceId: ended },
  })
  t.equal(anonymous.status, 401, 'no user: 401')
  const employee = await purge(stack, { processInstanceId: ended }, stack.users.employee)
  t.equal(employee.status, 403)
  t.match(employee.body, { error: { code: 'wm4031' } })
  const both = await purge(stack, { processInstanceId: ended, filter: { endedBefore: new Date().toISOString() } })
  t.equal(both.status, 400)
  t.match(both.body, { error: { code: 'wm4000' } })
  t.equal((await purge(stack, {})).status, 400, 'neither an instance nor a filter')
  for (const id of [running, ended, failed]) t.equal((await keptFor(stack.store, id)).context, 1, `${id} is kept`)
})

t.test(
  "a filter purges the caller's tenant's instances that ended before the time, limit at a time, and says when more match",
  async (t) => {
    const stack = await startControlStack(t)
    const { store } = stack
    const completed = [await stack.startCompletedLeave(), await stack.startCompletedLeave(), await stack.startCompletedLeave()].map(idOf)
    const cancelled = idOf(await stack.startLeave())
    t.equal((await stack.send('cancelProcess', 'POST', `/process/${cancelled}/cancel`, { as: stack.users.admin, body: HR })).status, 200)
    const running = idOf(await stack.startLeave())
    // The same ended instance in another organization with the same appId.
    const template = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: completed[0] })
    if (!template) throw new Error('no completed instance')
    await store.collection<StoredContext>(Collections.contexts).insertOne({
      ...template,
      _id: 'globex-instance',
      organizationId: 'globex',
      processInstance: { ...template.processInstance, processInstanceId: 'globex-instance', organizationId: 'globex' },
    })

    const past = { endedBefore: new Date(Date.now() - DAY_MS).toISOString() }
    t.same(
      (await purge(stack, { filter: past })).body.data,
      { purged: 0, processInstanceIds: [], more: false, dryRun: false },
      'none ended before',
    )

    const endedBefore = new Date(Date.now() + DAY_MS).toISOString()
    const onlyCancelled = await purge(stack, { filter: { endedBefore, processStatus: 'cancelled' }, dryRun: true })
    t.same(onlyCancelled.body.data.processInstanceIds, [cancelled])
    const first = await purge(stack, { filter: { endedBefore, processId: 'leave-request' }, limit: 3 })
    t.match(first.body.data, { purged: 3, more: true, dryRun: false })
    const second = await purge(stack, { filter: { endedBefore }, limit: 3 })
    t.match(second.body.data, { purged: 1, more: false })
    t.same(
      [...first.body.data.processInstanceIds, ...second.body.data.processInstanceIds].sort(),
      [...completed, cancelled].sort(),
      'every ended instance of the tenant, each once',
    )
    t.equal((await keptFor(store, running)).context, 1, 'a running instance is kept')
    t.equal((await keptFor(store, 'globex-instance')).context, 1, "another organization's instance is kept")
  },
)

t.test('HISTORY_RETENTION_DAYS removes ended instances past it in the background, queued once across engines', async (t) => {
  const clock = testClock('2026-03-01T09:00:00Z')
  const config = { historyRetentionDays: 30, batchPollMs: 20 }
  const stack = await startControlStack(t, config, { clock: clock.now })
  // A second engine over the same store: the hour's job is queued once between them.
  const second = await startService(t, 'engine', { store: stack.store, config, clock: clock.now })
  const old = idOf(await stack.startCompletedLeave())
  const stillRunning = idOf(await stack.startLeave())

  // A minute past the 30 days after the first instance ended (the test clock stood still meanwhile).
  clock.advance(30 * DAY_MS + 60_000)
  const recent = idOf(await stack.startCompletedLeave())
  await waitUntil(
    () => keptFor(stack.store, old),
    (kept) => kept.context === 0 && kept.activities === 0 && kept.notification === 0,
    20_000,
    20,
  )
  t.equal((await keptFor(stack.store, stillRunning)).context, 1, 'a running instance stays, however old')
  t.equal((await keptFor(stack.store, recent)).context, 1, 'an instance ended within the period stays')

  const jobs = await stack.store
    .collection<StoredBatchJob>(Collections.batchJobs)
    .find({ kind: 'historyRetention', scheduleKey: 'historyRetention:2026-03-31T09:00:00.000Z' })
    .toArray()
  t.equal(jobs.length, 1, 'one job for the hour, whichever engine queued it')
  const job = await waitUntil(
    async () => stack.store.collection<StoredBatchJob>(Collections.batchJobs).findOne({ _id: jobs[0]?._id }),
    (found) => found?.status === 'done',
    20_000,
    20,
  )
  t.match(job?.progress, { done: 1 })
  // The engine that ran the job counted the instance it removed.
  const counted = await Promise.all(
    [stack.engineUrl, second.url].map(async (url) => {
      const metrics = await (await fetch(`${url}/metrics`)).text()
      return Number(/workflow_process_instances_purged_total\{reason="retention"\} (\d+)/.exec(metrics)?.[1] ?? 0)
    }),
  )
  t.equal(counted[0]! + counted[1]!, 1, 'workflow_process_instances_purged_total{reason="retention"}')
})
