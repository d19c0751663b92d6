import t from 'tap'
import pino from 'pino'
import { engineErrorCatalogue } from '../../../../openapi/generated/errors.js'
import { type ErrorCatalogue, errorFactory } from '../../../../plugins/errors/service-error.js'
import { openTestStore } from '../../../testing/harness.js'
import { sampleState, sampleTask } from '../../../testing/instances.js'
import type { Principal } from '../../instances/authorization.js'
import { notificationRepository } from './repository.js'
import { decodeCursor, encodeCursor, eventTypeAfter, newestOpenTask, notificationRecord, Notifications } from './service.js'

const fail = errorFactory(engineErrorCatalogue as ErrorCatalogue)

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
  const repository = notificationRepository(await openTestStore(t))
  await repository.ensureIndexes()
  const notifications = new Notifications(repository, fail, pino({ level: 'silent' }))
  const minute = (n: number) => new Date(Date.UTC(2025, 5, 30, 8, n)).toISOString()
  // 7 of zoe's instances, two of them updated in the same minute; one she may not see; one of another app.
  for (let n = 0; n < 7; n++) {
    await repository.write(
      notificationRecord(
        sampleState({ processInstanceId: `zoe-${n}`, initiator: 'zoe', lastUpdate: minute(n === 6 ? 5 : n) }),
        'Updated',
        [],
      ),
    )
  }
  await repository.write(
    notificationRecord(sampleState({ processInstanceId: 'bobs', initiator: 'bob', tasks: [], lastUpdate: minute(30) }), 'Updated', []),
  )
  await repository.write(
    notificationRecord(
      sampleState({ processInstanceId: 'sales', appId: 'sales', initiator: 'zoe', lastUpdate: minute(31) }),
      'Updated',
      [],
    ),
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
