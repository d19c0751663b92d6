/** Answers sent before their body was read (unread-body.ts): a request whose body was read whole is left alone, as `inject` sends them. */
import Fastify from 'fastify'
import t from 'tap'
import { waitUntil } from '../../services/testing/wait.js'
import { discardUnreadBodies } from './unread-body.js'

t.test('a request whose body was read is not lingered on, even without a socket to close (inject)', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  let discardAsked = 0
  discardUnreadBodies(app, {
    discardBytes: () => {
      discardAsked++
      return 0
    },
    lingerMs: 1,
  })
  let responded = 0
  app.addHook('onResponse', async () => {
    responded++
  })
  app.post('/echo', async (request) => request.body)
  const answer = await app.inject({ method: 'POST', url: '/echo', payload: { a: 1 } })
  t.equal(answer.statusCode, 200)
  t.same(answer.json(), { a: 1 })
  await waitUntil(
    () => responded,
    (count) => count === 1,
  )
  // Before, it lingered on inject's socket, and the timer then called its missing end(): an uncaught TypeError.
  t.equal(discardAsked, 0, 'nothing was left to discard')
})
