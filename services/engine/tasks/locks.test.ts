import t from 'tap'
import { openTestStore } from '../../testing/harness.js'
import { taskLockRepository } from './locks.js'

const T0 = new Date('2025-06-30T08:00:00.000Z')
const later = (seconds: number) => new Date(T0.getTime() + seconds * 1000)

t.test('a free task is locked for the first user; the holder renews it, anybody else is told who holds it', async (t) => {
  const locks = taskLockRepository(await openTestStore(t), 60)
  const first = await locks.acquire('task-1', 'pi-1', 'alice', T0)
  t.match(first, { acquired: true, lock: { _id: 'task-1', processInstanceId: 'pi-1', userId: 'alice', expiresAt: later(60) } })
  const renewed = await locks.acquire('task-1', 'pi-1', 'alice', later(30))
  t.match(renewed, { acquired: true, lock: { userId: 'alice', expiresAt: later(90) } }, 'the TTL restarts on renewal')
  const refused = await locks.acquire('task-1', 'pi-1', 'bob', later(40))
  t.match(refused, { acquired: false, holder: { userId: 'alice' } })
  t.equal((await locks.holder('task-1', later(40)))?.userId, 'alice', 'the refusal changed nothing')
})

t.test('a lapsed lock is free: holder() no longer reports it and another user takes it', async (t) => {
  const locks = taskLockRepository(await openTestStore(t), 60)
  await locks.acquire('task-1', 'pi-1', 'alice', T0)
  t.equal(await locks.holder('task-1', later(60)), null, 'lapsed at expiresAt')
  t.match(await locks.acquire('task-1', 'pi-1', 'bob', later(61)), { acquired: true, lock: { userId: 'bob' } })
})

t.test('of two users racing for a free task exactly one gets it', async (t) => {
  const locks = taskLockRepository(await openTestStore(t), 60)
  for (let round = 0; round < 20; round++) {
    const taskId = `task-${round}`
    const outcomes = await Promise.all([locks.acquire(taskId, 'pi-1', 'alice', T0), locks.acquire(taskId, 'pi-1', 'bob', T0)])
    const winners = outcomes.filter((outcome) => outcome.acquired)
    t.equal(winners.length, 1, `round ${round}: one winner`)
    const loser = outcomes.find((outcome) => !outcome.acquired)
    t.ok(loser && !loser.acquired && winners[0]?.acquired && loser.holder.userId === winners[0].lock.userId, 'the loser is told the winner')
  }
})

t.test("release frees only the holder's lock; releaseAllOf and a task's release in a batch free regardless", async (t) => {
  const store = await openTestStore(t)
  const locks = taskLockRepository(store, 60)
  await locks.acquire('task-1', 'pi-1', 'alice', T0)
  await locks.acquire('task-2', 'pi-1', 'alice', T0)
  await locks.acquire('task-3', 'pi-2', 'bob', T0)
  t.equal(await locks.release('task-1', 'bob'), false, 'bob does not hold task-1')
  t.equal((await locks.holder('task-1', T0))?.userId, 'alice')
  t.equal(await locks.release('task-1', 'alice'), true)
  t.equal(await locks.holder('task-1', T0), null)
  t.equal(await locks.releaseAllOf('alice'), 1, "task-2 was alice's last lock")
  t.equal((await locks.holder('task-3', T0))?.userId, 'bob', 'bob keeps his')
  await store.applyAtomically([locks.taskRelease('task-3')])
  t.equal(await locks.holder('task-3', T0), null)
  const [again] = await store.applyAtomically([locks.taskRelease('task-3')])
  t.match(again, { deletedCount: 0 }, 'releasing a task nobody holds removes nothing and fails nothing')
})

t.test("a new task's lock is stored with the change that creates it, for the user, with the lock's TTL", async (t) => {
  const store = await openTestStore(t)
  const locks = taskLockRepository(store, 60)
  await store.applyAtomically([locks.newTaskLock('task-new', 'pi-1', 'alice', T0)])
  t.match(await locks.holder('task-new', T0), { _id: 'task-new', processInstanceId: 'pi-1', userId: 'alice', expiresAt: later(60) })
  t.match(
    await locks.acquire('task-new', 'pi-1', 'bob', later(30)),
    { acquired: false, holder: { userId: 'alice' } },
    'held like any other lock',
  )
  t.equal(await locks.holder('task-new', later(60)), null, 'and lapses like one')
})
