import t from 'tap'
import { openTestStore } from '../../testing/harness.js'
import { ACTIVITY_LOG_LENGTH } from '../../../store/activity-log.js'
import type { ActivityLogEntry } from '../../../store/collections.js'
import { activityRepository } from './activities.js'

t.test('activity reads newest first, also among records of the same millisecond, and per instance only', async (t) => {
  const activities = activityRepository(await openTestStore(t))
  const at = '2025-06-30T08:00:00.000Z'
  await activities.record({ processInstanceId: 'pi-1', timeStamp: '2025-06-30T07:59:59.000Z', type: 'start', userId: 'alice' })
  await activities.record({ processInstanceId: 'pi-1', timeStamp: at, type: 'display', userId: 'alice' })
  await activities.record({ processInstanceId: 'pi-1', timeStamp: at, type: 'save', userId: 'alice', taskId: 't1', stepId: 'request' })
  await activities.record({ processInstanceId: 'pi-2', timeStamp: at, type: 'start', userId: null })
  const log = await activities.listFor('pi-1', undefined)
  t.same(
    log.map((record) => record.type),
    ['save', 'display', 'start'],
  )
  t.same(
    log[0],
    { processInstanceId: 'pi-1', timeStamp: at, type: 'save', userId: 'alice', taskId: 't1', stepId: 'request' },
    'records come back without store ids',
  )
})

t.test("a change keeps its records in the instance's log, and the oldest beyond its length move to activities", async (t) => {
  const store = await openTestStore(t)
  const activities = activityRepository(store)
  const entry = (n: number): ActivityLogEntry => ({
    timeStamp: `2025-06-30T08:00:${String(n).padStart(2, '0')}.000Z`,
    type: 'save',
    userId: 'alice',
  })
  const full = Array.from({ length: ACTIVITY_LOG_LENGTH }, (_, n) => entry(n))

  const first = activities.logged('pi-1', undefined, [entry(0)])
  t.same(first, { activityLog: [entry(0)], writes: [] }, 'a short log moves nothing')

  const next = activities.logged('pi-1', full, [entry(30), entry(31)])
  t.same(next.activityLog, [...full.slice(2), entry(30), entry(31)], 'the log keeps the newest records, oldest first')
  t.match(
    next.writes,
    [
      { collection: 'activities', kind: 'insertOne', doc: { processInstanceId: 'pi-1', ...entry(0) } },
      { collection: 'activities', kind: 'insertOne', doc: { processInstanceId: 'pi-1', ...entry(1) } },
    ],
    'the two oldest are inserted into activities, with their instance',
  )
  await store.applyAtomically(next.writes)
  const listed = await activities.listFor('pi-1', next.activityLog)
  t.same(
    listed.map((record) => record.timeStamp),
    [...next.activityLog, entry(1), entry(0)]
      .map((record) => record.timeStamp)
      .sort()
      .reverse(),
    'the activity lists both, newest first',
  )
})

t.test("records of the same millisecond: the log's come before those in activities, each newest first", async (t) => {
  const activities = activityRepository(await openTestStore(t))
  const at = '2025-06-30T08:00:00.000Z'
  // Written apart from a change (a file's download) in the same millisecond as the change after it.
  await activities.record({ processInstanceId: 'pi-1', timeStamp: at, type: 'fileDownload', userId: 'alice' })
  const log: ActivityLogEntry[] = [
    { timeStamp: '2025-06-30T07:00:00.000Z', type: 'start', userId: 'alice' },
    { timeStamp: at, type: 'display', userId: 'alice' },
    { timeStamp: at, type: 'save', userId: 'alice' },
  ]
  const listed = await activities.listFor('pi-1', log)
  t.same(
    listed.map((record) => record.type),
    ['save', 'display', 'fileDownload', 'start'],
  )
})
