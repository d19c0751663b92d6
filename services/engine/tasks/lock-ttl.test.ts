import t from 'tap'
import { Collections, type StoredTaskLock } from '../../../store/collections.js'
import { testClock } from '../../testing/clock.js'
import { completeTask, formTask, openForm, startHrEngine, startLeaveRequest } from '../../testing/workflow.js'

const TTL_SECONDS = 8 * 3_600

t.test(
  'a task lock lapses LOCK_TTL_SECONDS after it was taken: until then another user ' +
    'is refused 409 wm3040, from then on the task is theirs to take',
  async (t) => {
    const clock = testClock('2026-01-05T08:00:00.000Z')
    const engine = await startHrEngine(t, { lockTtlSeconds: TTL_SECONDS }, { clock: clock.now })
    const { employee, manager, admin } = engine.users
    const started = (await startLeaveRequest(engine, employee, { days: 3, reason: 'Family visit' })).body
    const submitted = (await completeTask(engine, employee, started, { dataInstance: { days: 3, reason: 'Family visit' } })).body
    const approve = formTask(submitted)
    const locks = engine.store.collection<StoredTaskLock>(Collections.taskLocks)

    t.match(
      (await openForm(engine, manager, submitted)).body.formContext,
      { readOnly: false },
      'the manager opens the form and takes the lock',
    )
    t.match(
      await locks.findOne({ _id: approve.taskId }),
      { userId: manager.userId, expiresAt: new Date('2026-01-05T16:00:00.000Z') },
      "held until the TTL after the engine's now",
    )

    clock.advance(TTL_SECONDS * 1_000 - 1)
    t.match(
      (await openForm(engine, admin, submitted)).body.formContext,
      { readOnly: true, lockedBy: manager.userId },
      'a millisecond before it lapses the manager still holds it',
    )
    t.match(await completeTask(engine, admin, submitted), { status: 409, body: { code: 'wm3040' } })

    clock.advance(1)
    t.match(
      (await openForm(engine, admin, submitted)).body.formContext,
      { readOnly: false },
      'at its expiry the lock is free: the admin takes it',
    )
    t.match(await locks.findOne({ _id: approve.taskId }), { userId: admin.userId, expiresAt: new Date('2026-01-06T00:00:00.000Z') })
    t.match(await completeTask(engine, manager, submitted), { status: 409, body: { code: 'wm3040' } }, 'the manager is now the one refused')
    t.equal((await completeTask(engine, admin, submitted)).status, 200, 'the new holder completes the task')
  },
)
