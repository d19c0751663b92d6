import t from 'tap'
import type { ActivityRecord, Session } from '../../../openapi/generated/schemas.js'
import { Collections, type StoredContext } from '../../../store/collections.js'
import { notificationRecordOf } from '../../testing/instance-store.js'
import { HR, startHrEngine, startLeaveRequest, taskIds } from '../../testing/workflow.js'

async function setUp(t: Tap) {
  const engine = await startHrEngine(t)
  const started = (await startLeaveRequest(engine, engine.users.employee)).body
  const body = { ...HR, ...taskIds(started) }
  return { engine, started, body }
}
type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

async function storedOf(engine: Awaited<ReturnType<typeof startHrEngine>>, processInstanceId: string): Promise<StoredContext> {
  return (await engine.store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })) as StoredContext
}

t.test('adding notes keeps them newest first, makes the author a contributor, logs noteAdded and sends Updated', async (t) => {
  const { engine, body } = await setUp(t)
  const { employee, manager } = engine.users
  const first = await engine.call<Session>('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, note: 'first' } })
  t.equal(first.status, 200)
  const second = await engine.call<Session>('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, note: 'second' } })
  const notes = second.body.context.processInstance.notes
  t.same(
    notes.map((note) => note.note),
    ['second', 'first'],
    'newest first',
  )
  t.match(notes[0], { userId: employee.userId, userName: 'Eve Employee', taskId: body.taskId, createDate: String, updateDate: String })
  t.ok(second.body.context.processInstance.contributorUsers.includes(employee.userId), 'the author is a contributor')
  const activity = await engine.call<ActivityRecord[]>('listContextActivity', 'POST', '/context/activity', {
    user: employee.userId,
    body: { processInstanceId: body.processInstanceId },
  })
  t.same(activity.body.filter((entry) => entry.type === 'noteAdded').length, 2, 'one noteAdded per note')
  const notification = await notificationRecordOf(engine.store, body.processInstanceId)
  t.equal(notification?.eventType, 'Updated')
  const refused = await engine.call('addNote', 'POST', '/note/add', { user: manager.userId, body: { ...body, note: 'not mine to add' } })
  t.equal(refused.status, 403, 'a user not authorized on the instance may not add notes')
})

t.test('only the author may update or delete a note; a missing note is wm3090', async (t) => {
  const { engine, body } = await setUp(t)
  const { employee, admin } = engine.users
  const added = await engine.call<Session>('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, note: 'draft' } })
  const note = added.body.context.processInstance.notes[0]!
  const versionBefore = (await storedOf(engine, body.processInstanceId)).version

  const notAuthor = await engine.call<{ code: string }>('updateNote', 'POST', '/note/update', {
    user: admin.userId,
    body: { processInstanceId: body.processInstanceId, note: { id: note.id, note: 'hijacked' } },
  })
  t.match(notAuthor, { status: 404, body: { code: 'wm3091' } }, 'an admin is still not the author')
  const notDeleted = await engine.call<{ code: string }>('deleteNote', 'POST', '/note/delete', {
    user: admin.userId,
    body: { processInstanceId: body.processInstanceId, noteId: note.id },
  })
  t.match(notDeleted, { status: 404, body: { code: 'wm3091' } })
  const missing = await engine.call<{ code: string }>('updateNote', 'POST', '/note/update', {
    user: employee.userId,
    body: { processInstanceId: body.processInstanceId, note: { id: 'no-such-note', note: 'x' } },
  })
  t.match(missing, { status: 404, body: { code: 'wm3090' } })
  t.equal((await storedOf(engine, body.processInstanceId)).version, versionBefore, 'refused changes store nothing')

  const updated = await engine.call<Session>('updateNote', 'POST', '/note/update', {
    user: employee.userId,
    body: { processInstanceId: body.processInstanceId, note: { id: note.id, note: 'final' } },
  })
  t.equal(updated.status, 200)
  const changed = updated.body.context.processInstance.notes[0]!
  t.equal(changed.note, 'final')
  t.equal(changed.createDate, note.createDate, 'creation time kept')
  t.ok(changed.updateDate >= note.updateDate, 'updateDate refreshed')

  const deleted = await engine.call<Session>('deleteNote', 'POST', '/note/delete', {
    user: employee.userId,
    body: { processInstanceId: body.processInstanceId, noteId: note.id },
  })
  t.same(deleted.body.context.processInstance.notes, [])
})

t.test('notes: bad input, unknown task, another tenant and another process change nothing', async (t) => {
  const { engine, body } = await setUp(t)
  const { employee, stranger } = engine.users
  const versionBefore = (await storedOf(engine, body.processInstanceId)).version
  t.match(await engine.call('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, note: undefined } }), {
    status: 400,
    body: { code: 'wm4000' },
  })
  t.match(await engine.call('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, taskId: 'nope', note: 'x' } }), {
    status: 404,
    body: { code: 'wm3005' },
  })
  t.match(
    await engine.call('addNote', 'POST', '/note/add', { user: employee.userId, body: { ...body, processId: 'purchase', note: 'x' } }),
    { status: 404, body: { code: 'wm3001' } },
  )
  t.match(
    await engine.call('addNote', 'POST', '/note/add', { user: stranger.userId, body: { ...body, note: 'x' } }),
    { status: 404, body: { code: 'wm3001' } },
    "another app's instance is not found",
  )
  t.match(await engine.call('addNote', 'POST', '/note/add', { body: { ...body, note: 'x' } }), { status: 401, body: { code: 'wm4010' } })
  t.equal((await storedOf(engine, body.processInstanceId)).version, versionBefore)
})
