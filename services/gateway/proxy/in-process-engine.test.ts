/**
 * The proxy with an engine of its own thread (the all-in-one's): requests the gateway can hand over
 * whole are routed into the engine's Fastify instance without a socket, what must stream still goes over HTTP, and
 * the client sees the same answers, headers and failures either way.
 */
import t from 'tap'
import { engineError, type FakeEngine, startFakeEngine } from '../../testing/fake-engine.js'
import { startService } from '../../testing/harness.js'
import { held } from '../../testing/wait.js'

const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' } } as const

/** A gateway whose proxy reaches `engine` in-process; the engine also listens at ENGINE_URL, for what goes over HTTP. */
function gatewayInProcess(t: Parameters<typeof startService>[0], engine: FakeEngine, config: Record<string, unknown> = {}) {
  return startService(t, 'gateway', { config: { engineUrl: engine.url, ...config }, inProcessEngine: engine.app })
}

t.test('a request read whole is answered in-process, in the envelope, query, user and correlation headers as over HTTP', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.get('/process/:processInstanceId', async () => ({ processStatus: 'running', tasks: [] }))
    app.post('/note/add', async (request, reply) => {
      let body = ''
      for await (const chunk of request.body as AsyncIterable<Buffer>) body += chunk.toString()
      return reply.code(201).send({ echoed: JSON.parse(body) as unknown })
    })
    app.post('/note/delete', async (_request, reply) => reply.code(404).send(engineError(404, 'wm4004', 'No such note')))
  })
  const gateway = await gatewayInProcess(t, engine)

  const read = await fetch(`${gateway.url}/process/p-1?organizationId=acme&appId=hr`, {
    headers: { user: 'u-1', 'x-request-id': 'in-process-1' },
  })
  t.equal(read.status, 200)
  t.same(await read.json(), { status: 'success', data: { processStatus: 'running', tasks: [] } })
  const received = engine.received[0]
  t.equal(received?.overSocket, false, 'the engine got it without a connection')
  t.equal(received?.url, '/process/p-1?organizationId=acme&appId=hr', 'path and query as the client sent them')
  t.equal(received?.headers.user, 'u-1', 'the user header is forwarded')
  t.equal(received?.headers['x-request-id'], 'in-process-1', 'the correlation id is carried')
  t.equal(received?.headers.host, new URL(engine.url).host, 'the host is the engine’s, as over HTTP')

  const written = await fetch(`${gateway.url}/note/add`, { ...JSON_POST, body: JSON.stringify({ note: 'héllo' }) })
  t.equal(written.status, 201, 'the engine status is kept')
  t.same(await written.json(), { status: 'success', data: { echoed: { note: 'héllo' } } }, 'the body reached the engine byte for byte')

  const refused = await fetch(`${gateway.url}/note/delete`, { ...JSON_POST, body: '{}' })
  t.equal(refused.status, 404)
  t.match(await refused.json(), { status: 'error', data: null, error: { code: 'wm4004', message: 'No such note' } })
  t.ok(
    engine.received.every((request) => !request.overSocket),
    'every one of them in-process',
  )
})

t.test('what must stream goes over HTTP: a file download, a long poll, a body too large to read whole', async (t) => {
  const bytes = Buffer.alloc(300 * 1024, 7)
  const engine = await startFakeEngine(t, (app) => {
    app.post('/file/download', async (_request, reply) => reply.type('application/octet-stream').send(bytes))
    app.post('/external/worker/fetchAndLock', async () => [])
    app.post('/note/add', async (request) => {
      let length = 0
      for await (const chunk of request.body as AsyncIterable<Buffer>) length += chunk.length
      return { length }
    })
  })
  const gateway = await gatewayInProcess(t, engine)

  const download = await fetch(`${gateway.url}/file/download`, { ...JSON_POST, body: '{"storageHandle":"h-1"}' })
  t.equal(download.status, 200)
  t.ok(Buffer.from(await download.arrayBuffer()).equals(bytes), 'the bytes are untouched')
  const poll = await fetch(`${gateway.url}/external/worker/fetchAndLock`, { ...JSON_POST, body: '{"workerId":"w-1","maxTasks":1}' })
  t.same(await poll.json(), { status: 'success', data: [] })
  const large = JSON.stringify({ note: 'x'.repeat(100 * 1024) })
  const written = await fetch(`${gateway.url}/note/add`, { ...JSON_POST, body: large })
  t.same(await written.json(), { status: 'success', data: { length: Buffer.byteLength(large) } })

  t.same(
    engine.received.map((request) => [request.url, request.overSocket]),
    [
      ['/file/download', true],
      ['/external/worker/fetchAndLock', true],
      ['/note/add', true],
    ],
    'each went over a connection',
  )
})

t.test('an in-process engine slower than the route timeout answers 504 fm5040', async (t) => {
  // PROXY_TIMEOUT_SCALE 0.01: 60 s -> 600 ms. The engine answers only once the test lets it, so the
  // timeout comes first whatever the machine's speed.
  const answer = held()
  t.teardown(() => answer.release())
  const engine = await startFakeEngine(t, (app) => {
    app.post('/note/add', async () => {
      await answer.released
      return { isSuccess: true }
    })
  })
  const gateway = await gatewayInProcess(t, engine, { proxyTimeoutScale: 0.01 })
  const timedOut = await fetch(`${gateway.url}/note/add`, { ...JSON_POST, body: '{}' })
  t.equal(timedOut.status, 504)
  t.same(await timedOut.json(), { status: 'error', data: null, error: { message: 'Engine timeout', code: 'fm5040' } })
  t.equal(engine.received[0]?.overSocket, false)
})

t.test('an in-process engine that cannot take the request answers 502 fm5020', async (t) => {
  const engine = {
    routing: () => {
      throw new Error('the engine is closed')
    },
  }
  const gateway = await startService(t, 'gateway', { config: { engineUrl: 'http://127.0.0.1:1' }, inProcessEngine: engine })
  const failed = await fetch(`${gateway.url}/note/add`, { ...JSON_POST, body: '{}' })
  t.equal(failed.status, 502)
  t.match(await failed.json(), { status: 'error', data: null, error: { code: 'fm5020' } })
})
