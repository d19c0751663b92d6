/**
 * A request routed into a Fastify instance in-process (in-process-engine.ts) is served as one from
 * the network is: its body parsed and checked against its declared length, hooks run, the status,
 * headers and bytes of the answer collected, no body where HTTP sends none, and a failure of the
 * answer reported rather than thrown.
 */
import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { forwardInProcess, InProcessTimeout } from './in-process-engine.js'
import { held, waitUntil } from '../../testing/wait.js'

const JSON_HEADERS = { 'content-type': 'application/json' }

async function engineWith(t: { teardown(close: () => unknown): void }, define: (app: FastifyInstance) => void) {
  const app = Fastify()
  define(app)
  // Listening, as the all-in-one's engine does: its server keeps the process alive while an answer is awaited.
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return app
}

function post(url: string, body: string, headers: Record<string, string | number> = JSON_HEADERS) {
  const bytes = Buffer.from(body)
  return { method: 'POST', url, headers: { ...headers, 'content-length': String(bytes.length) }, body: bytes, timeoutMs: 10_000 }
}

t.test('a JSON body is parsed by the engine and its answer comes back with status, headers and bytes', async (t) => {
  const app = await engineWith(t, (app) => {
    app.post('/note/add', async (request, reply) => {
      const { note } = request.body as { note: string }
      return reply.code(201).header('x-note', 'kept').send({ note: note.toUpperCase(), query: request.query })
    })
  })
  const answer = await forwardInProcess(app, post('/note/add?appId=hr', JSON.stringify({ note: 'héllo' })))
  t.equal(answer.statusCode, 201)
  t.equal(answer.headers['x-note'], 'kept')
  t.match(answer.headers['content-type'], /^application\/json/)
  t.equal(answer.headers['content-length'], String(answer.body.length), 'the length Fastify measured')
  t.same(JSON.parse(answer.body.toString('utf8')), { note: 'HÉLLO', query: { appId: 'hr' } })
})

t.test('a body shorter than its declared length is refused by the engine, as over HTTP', async (t) => {
  const app = await engineWith(t, (app) => {
    app.post('/note/add', async () => ({ stored: true }))
  })
  const request = post('/note/add', '{"note":"x"}')
  const answer = await forwardInProcess(app, { ...request, headers: { ...request.headers, 'content-length': '40' } })
  t.equal(answer.statusCode, 400)
  t.match(JSON.parse(answer.body.toString('utf8')), { code: 'FST_ERR_CTP_INVALID_CONTENT_LENGTH' })
})

t.test('HEAD and 204 answers carry no body; an unknown route answers 404', async (t) => {
  const app = await engineWith(t, (app) => {
    app.get('/process/:id', async () => ({ processStatus: 'running' }))
    app.post('/note/delete', async (_request, reply) => reply.code(204).send())
  })
  const head = await forwardInProcess(app, { method: 'HEAD', url: '/process/p-1', headers: {}, body: undefined, timeoutMs: 10_000 })
  t.equal(head.statusCode, 200)
  t.equal(head.body.length, 0, 'no body for HEAD')
  const deleted = await forwardInProcess(app, post('/note/delete', '{}'))
  t.equal(deleted.statusCode, 204)
  t.equal(deleted.body.length, 0, 'no body for 204')
  t.equal(deleted.headers['content-type'], undefined)
  const unknown = await forwardInProcess(app, { method: 'GET', url: '/nowhere', headers: {}, body: undefined, timeoutMs: 10_000 })
  t.equal(unknown.statusCode, 404)
})

t.test('the engine’s hooks run around the request, onResponse once the answer is out', async (t) => {
  const seen: string[] = []
  const app = await engineWith(t, (app) => {
    app.addHook('onRequest', async (request) => {
      seen.push(`onRequest ${request.ip} ${request.headers.user}`)
    })
    app.addHook('onResponse', async (_request, reply) => {
      seen.push(`onResponse ${reply.statusCode} ${reply.elapsedTime >= 0}`)
    })
    // Fastify keeps an onTimeout hook's state on the request's socket: never called here, it must not fail the request.
    app.addHook('onTimeout', async () => {
      seen.push('onTimeout')
    })
    app.get('/liveness', async () => ({ status: 'ok' }))
  })
  const answer = await forwardInProcess(app, {
    method: 'GET',
    url: '/liveness',
    headers: { user: 'u-1' },
    body: undefined,
    timeoutMs: 10_000,
  })
  t.equal(answer.statusCode, 200)
  await waitUntil(
    () => seen.length,
    (count) => count === 2,
  )
  t.same(seen, ['onRequest 127.0.0.1 u-1', 'onResponse 200 true'])
})

t.test('an answer the engine destroys, or that fails to route, rejects instead of throwing', async (t) => {
  const app = await engineWith(t, (app) => {
    app.get('/broken', async (_request, reply) => {
      reply.raw.destroy(new Error('lost the answer'))
      return reply
    })
  })
  await t.rejects(
    forwardInProcess(app, { method: 'GET', url: '/broken', headers: {}, body: undefined, timeoutMs: 10_000 }),
    /lost the answer/,
  )
  const closed = {
    routing: () => {
      throw new Error('the engine is closed')
    },
  }
  await t.rejects(
    forwardInProcess(closed, { method: 'GET', url: '/x', headers: {}, body: undefined, timeoutMs: 10_000 }),
    /the engine is closed/,
  )
})

t.test('an engine slower than the timeout is left behind with InProcessTimeout', async (t) => {
  const answer = held()
  t.teardown(() => answer.release())
  const app = await engineWith(t, (app) => {
    app.get('/slow', async () => {
      await answer.released
      return { late: true }
    })
  })
  const failure: unknown = await forwardInProcess(app, { method: 'GET', url: '/slow', headers: {}, body: undefined, timeoutMs: 50 }).then(
    () => undefined,
    (error: unknown) => error,
  )
  t.ok(failure instanceof InProcessTimeout, 'rejected with InProcessTimeout')
  t.equal((failure as InProcessTimeout).code, 'UND_ERR_HEADERS_TIMEOUT', 'which the proxy answers as it does an HTTP timeout')
})
