import t from 'tap'
import pino from 'pino'
import { engineErrorCatalogue } from '../../../../openapi/generated/errors.js'
import { type ErrorCatalogue, errorFactory } from '../../../../plugins/errors/service-error.js'
import { openTestStore } from '../../../testing/harness.js'
import { sampleState, sampleTask } from '../../../testing/instances.js'
import type { Principal } from '../../instances/authorization.js'
import { contextRepository } from '../../instances/repository.js'
import { notificationRepository } from './repository.js'
import { newestOpenTask, notificationRecord } from '../../../../store/notification-records.js'
import { Collections, type StoredNotice } from '../../../../store/collections.js'
import type { NotificationEventType } from '../../../../openapi/generated/schemas.js'
import type { InformItem, ProcessState } from '../../../../runtime/types.js'
import { decodeCursor, encodeCursor, eventTypeAfter, Notifications } from './service.js'

const fail = errorFactory(engineErrorCatalogue as ErrorCatalogue)

/** What a change with `eventType` stores with the instance in `state`. */
function noticeOf(state: ProcessState, eventType: NotificationEventType, informList: InformItem[] = []): StoredNotice {
  return { eventType, informList, lastUpdate: state.processInstance.lastUpdate }
}

t.test("the event of a change: Finished when the process ended, Failed when a thread failed, else the operation's", async (t) => {
  const task = sampleTask()
  t.equal(eventTypeAfter('TaskCompleted', [{ kind: 'taskEnded', task }]), 'TaskCompleted')
  t.equal(
    eventTypeAfter('TaskCompleted', [
      { kind: 'taskEnded', task },
      { kind: 'processEnded', status: 'completed' },
    ]),
    'Finished',
  )
  t.equal(eventTypeAfter('Updated', [{ kind: 'threadFailed', thread: { threadId: 'b', stepId: 'x', status: 'failed' } }]), 'Failed')
  t.equal(eventTypeAfter('Created', [{ kind: 'processEnded', status: 'completed' }]), 'Created', 'every start is Created')
})

t.test('a record is on us with the newest open task while one is open', async (t) => {
  const older = sampleTask({ taskId: 'older', createdAt: '2025-06-30T08:00:00.000Z' })
  const newer = sampleTask({ taskId: 'newer', createdAt: '2025-06-30T08:05:00.000Z' })
  const closed = sampleTask({ taskId: 'closed', status: 'completed', createdAt: '2025-06-30T09:00:00.000Z' })
  t.equal(newestOpenTask([older, newer, closed])?.taskId, 'newer')
  const open = notificationRecord(sampleState({ tasks: [older, newer, closed] }), 'Updated', [{ header: '3 days' }])
  t.match(open, {
    _id: 'pi-1',
    appId: 'hr',
    organizationId: 'acme',
    eventType: 'Updated',
    informList: [{ header: '3 days' }],
    onUs: true,
    task: { taskId: 'newer' },
  })
  const done = notificationRecord(sampleState({ tasks: [closed], processStatus: 'completed' }), 'Finished', [])
  t.equal(done.onUs, false)
  t.notOk('task' in done)
})

t.test('cursors round-trip; anything else is not a cursor', async (t) => {
  const position = { lastUpdate: '2025-06-30T08:00:00.000Z', processInstanceId: 'pi-9' }
  t.same(decodeCursor(encodeCursor(position)), position)
  for (const bad of ['x', Buffer.from('[1,2]').toString('base64url'), Buffer.from('{"a":1}').toString('base64url')])
    t.equal(decodeCursor(bad), undefined)
})

t.test("listing shows only the app's records the user may see, newest first, page by page without gaps", async (t) => {
  const store = await openTestStore(t)
  const repository = notificationRepository(store)
  await repository.ensureIndexes()
  const contexts = contextRepository(store)
  const notifications = new Notifications(repository, fail, pino({ level: 'silent' }))
  const minute = (n: number) => new Date(Date.UTC(2025, 5, 30, 8, n)).toISOString()
  // 7 of zoe's instances, two of them updated in the same minute; one she may not see; one of another app.
  // Every other record is its instance's view, the others are stored apart: the listing interleaves both.
  for (let n = 0; n < 7; n++) {
    const state = sampleState({ processInstanceId: `zoe-${n}`, initiator: 'zoe', lastUpdate: minute(n === 6 ? 5 : n) })
    if (n % 2 === 0) await contexts.insert(state, [], { notice: noticeOf(state, 'Updated') })
    else await repository.store(notificationRecord(state, 'Updated', []), 1)
  }
  const bobs = sampleState({ processInstanceId: 'bobs', initiator: 'bob', tasks: [], lastUpdate: minute(30) })
  await contexts.insert(bobs, [], { notice: noticeOf(bobs, 'Updated') })
  await repository.store(
    notificationRecord(
      sampleState({ processInstanceId: 'sales', appId: 'sales', initiator: 'zoe', lastUpdate: minute(31) }),
      'Updated',
      [],
    ),
    1,
  )

  const zoe: Principal = { userId: 'zoe', roles: [], swimlanes: [], appId: 'hr', organizationId: 'acme' }
  const seen: string[] = []
  let cursor: string | undefined
  let pages = 0
  do {
    const page = await notifications.list(zoe, 'hr', 3, cursor)
    t.ok(page.records.length <= 3)
    seen.push(...page.records.map((record) => record._id))
    cursor = page.nextCursor
    pages++
  } while (cursor && pages < 10)
  t.same(seen, ['zoe-6', 'zoe-5', 'zoe-4', 'zoe-3', 'zoe-2', 'zoe-1', 'zoe-0'], 'newest lastUpdate first (ties by id), each once')
  t.equal(pages, 3)

  const admin: Principal = { ...zoe, userId: 'root', roles: ['admin'] }
  t.equal((await notifications.list(admin, 'hr', 50, undefined)).records.length, 8, "an admin sees the app's every record")
  t.same((await notifications.list(zoe, 'sales', 50, undefined)).records, [], "another tenant's app lists nothing")
  await t.rejects(notifications.list(zoe, 'hr', 3, 'garbage'), { code: 'wm4000', statusCode: 400 })
})

t.test('a record stored apart from a change is the instance’s record until the instance changes again; then its view is', async (t) => {
  const store = await openTestStore(t)
  const repository = notificationRepository(store)
  await repository.ensureIndexes()
  const contexts = contextRepository(store)
  const admin: Principal = { userId: 'root', roles: ['admin'], swimlanes: [], appId: 'hr', organizationId: 'acme' }
  const notifications = new Notifications(repository, fail, pino({ level: 'silent' }))
  const listed = async () => (await notifications.list(admin, 'hr', 50, undefined)).records
  const first = sampleState({ processInstanceId: 'pi-1', lastUpdate: '2025-06-30T08:00:00.000Z' })
  const stored = await contexts.insert(first, [], { notice: noticeOf(first, 'Created', [{ header: 'first' }]) })
  t.match(await repository.find('pi-1'), {
    eventType: 'Created',
    informList: [{ header: 'first' }],
    onUs: true,
    task: { taskId: 'task-1' },
  })

  // Resent over version 1: stored apart, it is the record, listed once and without its basis.
  await repository.store(notificationRecord(first, 'Updated', [{ header: 'resent' }]), stored.version)
  t.match(await listed(), [{ _id: 'pi-1', eventType: 'Updated', informList: [{ header: 'resent' }] }])
  t.equal((await listed()).length, 1, 'one record per instance')
  t.notOk('basis' in ((await repository.find('pi-1')) ?? {}), 'clients never see the version it was written over')

  // The instance changes: the view of version 2 is the record, though the stored one is still there.
  const second = sampleState({ processInstanceId: 'pi-1', lastUpdate: '2025-06-30T09:00:00.000Z', tasks: [] })
  await contexts.compareAndSet(stored, second, [], { notice: noticeOf(second, 'Finished') })
  t.match(await repository.find('pi-1'), { eventType: 'Finished', onUs: false })
  t.same(
    (await listed()).map((record) => [record._id, record.eventType]),
    [['pi-1', 'Finished']],
    'the stale stored record is not listed',
  )

  // An earlier release stored the record with the change and no `notice` on the instance: it is the record.
  const legacy = sampleState({ processInstanceId: 'pi-old', lastUpdate: '2025-06-29T08:00:00.000Z' })
  await contexts.insert(legacy)
  await store.collection(Collections.notifications).insertOne({ ...notificationRecord(legacy, 'TaskCompleted', []) })
  t.match(await repository.find('pi-old'), { eventType: 'TaskCompleted' })
  // A record of an id the engine does not know (the gateway's POST /notify) is listed as stored.
  await store
    .collection(Collections.notifications)
    .insertOne({ ...notificationRecord(sampleState({ processInstanceId: 'pi-ext' }), 'Created', []) })
  t.same(
    (await listed()).map((record) => record._id),
    ['pi-1', 'pi-ext', 'pi-old'],
  )
})
