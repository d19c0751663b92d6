import Fastify from 'fastify'
import t from 'tap'
import clock, { systemClock } from './plugin.js'

t.test('without a clock the service reads the system clock, as in production', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(clock, {})
  await app.ready()
  t.equal(app.clock, systemClock)
  const before = Date.now()
  const read = app.clock().getTime()
  t.ok(read >= before && read <= Date.now(), 'the time of the call')
})

t.test('a given clock is the one the service reads, and only it moves the time', async (t) => {
  let now = new Date('2026-01-05T08:00:00.000Z')
  const app = Fastify()
  t.teardown(() => app.close())
  await app.register(clock, { clock: () => now })
  await app.ready()
  t.same(app.clock(), new Date('2026-01-05T08:00:00.000Z'))
  now = new Date(now.getTime() + 8 * 3_600_000)
  t.same(app.clock(), new Date('2026-01-05T16:00:00.000Z'))
})
