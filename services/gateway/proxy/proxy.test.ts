import { createHash, randomBytes } from 'node:crypto'
import { type IncomingHttpHeaders, request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import { join } from 'node:path'
import { PassThrough, type Readable } from 'node:stream'
import { text } from 'node:stream/consumers'
import t from 'tap'
import { proxyRoutes } from '../../../openapi/generated/proxy-routes.js'
import { listenOnUnixSocket } from '../../../lib/server/unix-socket.js'
import { ContractChecker } from '../../testing/contract.js'
import { closedPortUrl, engineError, startFakeEngine } from '../../testing/fake-engine.js'
import { startService, tempDir } from '../../testing/harness.js'
import { held, waitUntil } from '../../testing/wait.js'
import { type ProxyRouteTable, routeKey } from './route-table.js'
import { ROUTE_TABLE_KEY } from './routes.js'

const contract = new ContractChecker('gateway')

interface RawAnswer {
  status: number
  headers: IncomingHttpHeaders
  body: Buffer
}

/** node:http, not fetch: it can send hop-by-hop headers and stream a body at the test's pace. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; body?: Readable | string }): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method ?? 'GET', headers: options.headers ?? {}, agent: false }, (response) => {
      const chunks: Buffer[] = []
      response.on('data', (chunk: Buffer) => chunks.push(chunk))
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
      response.on('error', reject)
    })
    outgoing.on('error', reject)
    if (options.body === undefined) outgoing.end()
    else if (typeof options.body === 'string') outgoing.end(options.body)
    else options.body.pipe(outgoing)
  })
}

function json(answer: RawAnswer): Record<string, unknown> {
  return JSON.parse(answer.body.toString('utf8')) as Record<string, unknown>
}

/** Rejects when `promise` has not settled within `ms`: a stalled stream fails the test instead of hanging it. */
function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    promise,
    new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`${what} did not happen within ${ms} ms`)), ms).unref()),
  ])
}

t.test('a JSON resource of the engine reaches the client in the envelope, query string and status kept', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.get('/process/:processInstanceId', async () => ({
      tasks: [{ taskId: 't-1', stepId: 'approve', name: 'Approve leave' }],
      processStatus: 'running',
    }))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const answer = await send(`${gateway.url}/process/p-1?organizationId=acme&appId=hr`, {})
  t.equal(answer.status, 200)
  t.match(answer.headers['content-type'], /^application\/json/)
  const body = json(answer)
  t.same(body, {
    status: 'success',
    data: { tasks: [{ taskId: 't-1', stepId: 'approve', name: 'Approve leave' }], processStatus: 'running' },
  })
  t.same(contract.errors('getProcessStatus', 200, body), [])
  t.equal(engine.received[0]?.url, '/process/p-1?organizationId=acme&appId=hr', 'the engine got the path and the auto-injected query')
})

t.test('engine error records are enveloped with the documented status mapping, the HTTP status kept', async (t) => {
  const cases = [
    { status: 400, code: 'wm4000', envelope: 'customerror' },
    { status: 401, code: 'wm4010', envelope: 'permissionError' },
    { status: 403, code: 'wm4030', envelope: 'permissionError' },
    { status: 404, code: 'wm3001', envelope: 'customerror' },
    { status: 409, code: 'wm3040', envelope: 'customerror' },
    { status: 500, code: 'wm5000', envelope: 'error' },
  ]
  const engine = await startFakeEngine(t, (app) => {
    app.post('/context', async (request, reply) => {
      const wanted = cases.find((entry) => entry.code === request.headers['x-wanted-code'])!
      return reply.code(wanted.status).send(
        engineError(wanted.status, wanted.code, `failure ${wanted.code}`, {
          summary: 'Title',
          parameters: { field: 'body.processId' },
          stack: 'Error: at engine.ts:1',
        }),
      )
    })
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  for (const entry of cases) {
    const answer = await send(`${gateway.url}/context`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-wanted-code': entry.code },
      body: '{"processId":"leave-request"}',
    })
    t.equal(answer.status, entry.status, `${entry.code} keeps its status`)
    const body = json(answer)
    t.same(
      body,
      {
        status: entry.envelope,
        data: null,
        error: { message: `failure ${entry.code}`, code: entry.code, title: 'Title', parameters: { field: 'body.processId' } },
      },
      `${entry.code} is ${entry.envelope}, the engine's stack left out`,
    )
    t.same(contract.errors('openContext', entry.status, body), [], `${entry.code} answer conforms`)
  }
})

t.test('the engine stack reaches the client only in development', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.post('/note/add', async (_request, reply) =>
      reply.code(500).send(engineError(500, 'wm5000', 'Internal error', { stack: 'Error: boom\n    at engine.ts:1' })),
    )
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url, development: true } })
  const body = json(await send(`${gateway.url}/note/add`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }))
  t.match(body, { status: 'error', data: 'Error: boom\n    at engine.ts:1', error: { code: 'wm5000' } })
})

t.test('every row of the proxy table reaches its engine path with its method; /action/start goes to /process/start', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    for (const route of new Set(proxyRoutes.map((entry) => `${entry.method} ${entry.engineUrl}`))) {
      const [method, url] = route.split(' ') as [string, string]
      app.route({
        method: method as 'GET' | 'POST' | 'DELETE',
        url,
        handler: async (request) => ({ engineMethod: request.method, enginePath: request.url.split('?')[0] }),
      })
    }
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  for (const route of proxyRoutes) {
    const path = route.url.replace(/:(\w+)/g, (_match, name: string) => `sample-${name}`)
    const enginePath = route.engineUrl.replace(/:(\w+)/g, (_match, name: string) => `sample-${name}`)
    const answer = await send(
      `${gateway.url}${path}`,
      route.method === 'POST' ? { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' } : { method: route.method },
    )
    const engineAnswer = { engineMethod: route.method, enginePath }
    // A raw route (the file download) passes its success through untouched, whatever its type.
    t.same(
      json(answer),
      route.raw ? engineAnswer : { status: 'success', data: engineAnswer },
      `${route.method} ${route.url} -> ${enginePath}`,
    )
  }
})

t.test('path parameters reach the engine encoded as the client sent them', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.post('/external/data/search/:collection', async (request) => ({
      items: [(request.params as { collection: string }).collection],
      total: 1,
      skip: 0,
      limit: 50,
    }))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const answer = await send(`${gateway.url}/external/data/search/Leave%20bookings`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  })
  t.match(json(answer), { status: 'success', data: { items: ['Leave bookings'] } })
  t.equal(engine.received[0]?.url, '/external/data/search/Leave%20bookings')
})

t.test('JSON bodies reach the engine byte for byte', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.post('/action/save', async (request) => ({ echoed: await text(request.body as Readable) }))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const sent = JSON.stringify({
    processId: 'leave-request',
    dataInstance: { days: 3, reason: 'Family visit — é' },
    organizationId: 'acme',
    appId: 'hr',
  })
  const answer = await send(`${gateway.url}/action/save`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent })
  t.same(json(answer), { status: 'success', data: { echoed: sent } })
})

t.test(
  'a body of a declared length reaches the engine whole with that length, a chunked one byte for byte; an incomplete one never reaches it',
  async (t) => {
    const engine = await startFakeEngine(t, (app) => {
      app.post('/action/save', async (request) => ({
        echoed: await text(request.body as Readable),
        length: request.headers['content-length'] ?? null,
        chunked: request.headers['transfer-encoding'] ?? null,
      }))
    })
    const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
    const url = `${gateway.url}/action/save`
    const sent = JSON.stringify({ processId: 'leave-request', dataInstance: { days: 3 } })
    const whole = await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent })
    t.same(json(whole).data, { echoed: sent, length: String(Buffer.byteLength(sent)), chunked: null }, 'declared length: sent whole')

    const streamed = new PassThrough()
    const chunkedAnswer = send(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
      body: streamed,
    })
    streamed.write(sent.slice(0, 10))
    streamed.end(sent.slice(10))
    t.match(json(await chunkedAnswer).data, { echoed: sent }, 'a chunked body (undeclared length) reaches it byte for byte')

    // Half of a declared body, the connection kept open: the engine is sent nothing of it.
    const { port } = new URL(gateway.url)
    const partial = connect(Number(port), '127.0.0.1')
    t.teardown(() => partial.destroy())
    await new Promise<void>((resolve) => partial.once('connect', resolve))
    partial.write(`POST /action/save HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"days":`)
    const received = engine.received.length
    const after = await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent })
    t.equal(after.status, 200)
    t.equal(engine.received.length, received + 1, 'only the complete request reached the engine')
    partial.destroy()
    const next = await send(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: sent })
    t.same(
      json(next).data,
      { echoed: sent, length: String(Buffer.byteLength(sent)), chunked: null },
      'the client leaving changes nothing for the next one',
    )
    t.equal(engine.received.length, received + 2, 'and the abandoned body never reached the engine')
  },
)

for (const inProcess of [false, true]) {
  const way = inProcess ? 'in-process' : 'over HTTP'
  t.test(
    `correlation headers are injected, user/lplogclientid/additionalheaders forwarded, hop-by-hop headers dropped (${way})`,
    async (t) => {
      const engine = await startFakeEngine(t, (app) => {
        app.get('/notifications/:appId', async (_request, reply) =>
          reply.header('x-engine-note', 'kept').header('traceparent', '00-11111111111111111111111111111111-2222222222222222-01').send([]),
        )
      })
      const gateway = await startService(t, 'gateway', {
        config: { engineUrl: engine.url },
        ...(inProcess ? { inProcessEngine: engine.app } : {}),
      })
      const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736'
      const answer = await send(`${gateway.url}/notifications/hr`, {
        headers: {
          'x-request-id': 'req-77',
          traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`,
          user: 'u-42',
          lplogclientid: 'client-9',
          additionalheaders: encodeURIComponent(JSON.stringify({ tenant: 'acme' })),
          connection: 'keep-alive, x-hop-only',
          'x-hop-only': 'secret',
          'keep-alive': 'timeout=5',
          'proxy-authorization': 'Basic eDp5',
          te: 'trailers',
          'accept-encoding': 'gzip',
        },
      })
      t.equal(answer.status, 200)
      t.equal(engine.received[0]!.overSocket, !inProcess)
      const forwarded = engine.received[0]!.headers
      t.equal(forwarded['x-request-id'], 'req-77', "the gateway's request id (the caller's, kept)")
      const gatewaySpan = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(String(answer.headers.traceparent))
      t.ok(gatewaySpan, 'the client sees the gateway span')
      t.equal(gatewaySpan?.[1], callerTrace, "the gateway continues the caller's trace")
      t.equal(forwarded.traceparent, `00-${callerTrace}-${gatewaySpan?.[2]}-01`, "the engine's parent is the gateway span")
      t.equal(forwarded.user, 'u-42')
      t.equal(forwarded.lplogclientid, 'client-9')
      t.equal(forwarded.additionalheaders, encodeURIComponent(JSON.stringify({ tenant: 'acme' })))
      for (const dropped of ['x-hop-only', 'keep-alive', 'proxy-authorization', 'te', 'accept-encoding'])
        t.notOk(dropped in forwarded, `${dropped} stays on its hop`)
      t.notMatch(String(forwarded.connection ?? ''), /x-hop-only/)
      t.equal(answer.headers['x-engine-note'], 'kept', "the engine's end-to-end answer headers are kept")
      t.equal(answer.headers['x-request-id'], 'req-77')
    },
  )
}

t.test('connections to the engine are kept alive and reused', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.get('/process/:processInstanceId', async () => ({ tasks: [], processStatus: 'completed' }))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  for (let index = 0; index < 5; index++) t.equal((await send(`${gateway.url}/process/p-${index}`, {})).status, 200)
  t.equal(new Set(engine.received.map((request) => request.remotePort)).size, 1, 'five requests, one connection')
})

t.test("with ENGINE_SOCKET the gateway reaches the engine over its Unix socket, not ENGINE_URL's port", async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.get('/process/:processInstanceId', async () => ({ tasks: [], processStatus: 'running' }))
  })
  const engineSocket = join(tempDir(t), 'engine.sock')
  const socket = await listenOnUnixSocket(engine.app.server, engineSocket)
  t.teardown(() => socket.close())
  // Nothing listens at ENGINE_URL: an answer can only have come through the socket.
  const gateway = await startService(t, 'gateway', { config: { engineUrl: await closedPortUrl(), engineSocket } })
  const answer = await send(`${gateway.url}/process/p-1?appId=hr`, { headers: { user: 'u-1' } })
  t.equal(answer.status, 200)
  t.same(json(answer), { status: 'success', data: { tasks: [], processStatus: 'running' } })
  t.equal(engine.received[0]?.url, '/process/p-1?appId=hr')
  t.equal(engine.received[0]?.headers.user, 'u-1')
  t.equal(engine.received[0]?.remotePort, undefined, 'a Unix socket connection has no port')
})

t.test('a file download streams to the client untouched, before the engine has finished', async (t) => {
  const first = randomBytes(256 * 1024)
  const second = randomBytes(256 * 1024)
  let clientGotFirstBytes!: () => void
  const clientHasFirstBytes = new Promise<void>((resolve) => (clientGotFirstBytes = resolve))
  const engine = await startFakeEngine(t, (app) => {
    app.post('/file/download', async (_request, reply) => {
      const body = new PassThrough()
      body.write(first)
      void clientHasFirstBytes.then(() => body.end(second))
      return reply.type('application/octet-stream').header('content-disposition', 'attachment; filename="scan.pdf"').send(body)
    })
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const received = await within(
    new Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const outgoing = httpRequest(
        `${gateway.url}/file/download`,
        { method: 'POST', headers: { 'content-type': 'application/json' } },
        (response) => {
          const chunks: Buffer[] = []
          response.on('data', (chunk: Buffer) => {
            chunks.push(chunk)
            if (Buffer.concat(chunks).length >= first.length) clientGotFirstBytes()
          })
          response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }))
        },
      )
      outgoing.on('error', reject)
      outgoing.end('{"storageHandle":"h-1"}')
    }),
    5000,
    'the download',
  )
  t.equal(received.status, 200)
  t.equal(received.headers['content-type'], 'application/octet-stream')
  t.equal(received.headers['content-disposition'], 'attachment; filename="scan.pdf"')
  t.ok(received.body.equals(Buffer.concat([first, second])), 'the bytes are untouched')
})

t.test('a download that fails answers enveloped JSON', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.post('/file/download', async (_request, reply) =>
      reply.code(500).send(engineError(500, 'wm3070', 'The model has no fileDownloadFunction')),
    )
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const answer = await send(`${gateway.url}/file/download`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(answer.status, 500)
  const body = json(answer)
  t.same(body, { status: 'error', data: null, error: { message: 'The model has no fileDownloadFunction', code: 'wm3070' } })
  t.same(contract.errors('downloadFile', 500, body), [])
})

t.test('a 20 MiB multipart upload streams through the gateway: the engine reads it while the client still sends', async (t) => {
  const boundary = 'workflow-test-boundary'
  const fileSize = 20 * 1024 * 1024
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; ` +
      `name="fields"\r\n\r\n${JSON.stringify({ processId: 'leave-request', processInstanceId: 'p-1', fileName: 'scan.pdf' })}\r\n` +
      `--${boundary}\r\nContent-Disposition: form-data; name="fileBody"; filename="scan.pdf"\r\nContent-Type: application/pdf\r\n\r\n`,
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  const half = randomBytes(fileSize / 2)
  const sentHash = createHash('sha256').update(head).update(half).update(half).update(tail).digest('hex')
  let engineGotFirstHalf!: () => void
  const engineHasFirstHalf = new Promise<void>((resolve) => (engineGotFirstHalf = resolve))
  const engine = await startFakeEngine(t, (app) => {
    app.post('/file/upload', async (request) => {
      const hash = createHash('sha256')
      let length = 0
      for await (const chunk of request.body as Readable) {
        hash.update(chunk as Buffer)
        length += (chunk as Buffer).length
        if (length >= head.length + half.length) engineGotFirstHalf()
      }
      return {
        id: hash.digest('hex'),
        storageHandle: `bytes-${length}`,
        label: request.headers['content-type'] ?? '',
        fileName: 'scan.pdf',
        fileType: 'application/pdf',
      }
    })
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const body = new PassThrough()
  const answer = send(`${gateway.url}/file/upload`, {
    method: 'POST',
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      'content-length': String(head.length + 2 * half.length + tail.length),
    },
    body,
  })
  body.write(head)
  body.write(half)
  // The rest is sent only once the engine has the first half: a gateway that held the body whole
  // before forwarding it would wait here forever.
  await within(engineHasFirstHalf, 10_000, 'the engine receiving the first half while the client still sends')
  body.write(half)
  body.end(tail)
  const result = json(await answer)
  t.same(
    result,
    {
      status: 'success',
      data: {
        id: sentHash,
        storageHandle: `bytes-${head.length + 2 * half.length + tail.length}`,
        label: `multipart/form-data; boundary=${boundary}`,
        fileName: 'scan.pdf',
        fileType: 'application/pdf',
      },
    },
    'every byte arrived, in order, with its content type',
  )
  t.same(contract.errors('uploadFile', 200, result), [])
})

t.test(
  'an engine slower than the route timeout answers 504 fm5040 at the timeout; file routes allow 300 s to 60 s elsewhere',
  async (t) => {
    // PROXY_TIMEOUT_SCALE 0.01: 60 s -> 600 ms, 300 s -> 3 s. The engine answers only once the test lets it, so what
    // comes first, the gateway's timeout or the engine's answer, does not depend on the machine's speed.
    const answers = { note: held(), file: held() }
    t.teardown(() => [answers.note, answers.file].forEach((answer) => answer.release()))
    const engine = await startFakeEngine(t, (app) => {
      for (const [url, answer] of [
        ['/note/add', answers.note],
        ['/file/delete', answers.file],
      ] as const) {
        app.post(url, async () => {
          await answer.released
          return { isSuccess: true }
        })
      }
    })
    const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url, proxyTimeoutScale: 0.01 } })
    const emptyJsonPost = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' }
    // Sent first: once the other route has timed out, this one has waited at least as long.
    const slowFile = send(`${gateway.url}/file/delete`, emptyJsonPost)
    await waitUntil(
      () => engine.received.length,
      (count) => count >= 1,
    )
    const started = Date.now()
    const timedOut = await send(`${gateway.url}/note/add`, emptyJsonPost)
    const elapsed = Date.now() - started
    t.equal(timedOut.status, 504)
    const body = json(timedOut)
    t.same(body, { status: 'error', data: null, error: { message: 'Engine timeout', code: 'fm5040' } })
    t.same(contract.errors('addNote', 504, body), [])
    // undici's timers are coarse (they tick every half second or so, early or late): the bound is wide.
    t.ok(elapsed >= 300, `answered at the 600 ms timeout, while the engine had not answered (${elapsed} ms)`)
    answers.file.release()
    t.same(json(await slowFile), { status: 'success', data: { isSuccess: true } }, 'the same wait is within a file route’s timeout')
  },
)

t.test('an unreachable engine answers 502 fm5020 at once', async (t) => {
  const gateway = await startService(t, 'gateway', { config: { engineUrl: await closedPortUrl() } })
  const started = Date.now()
  const answer = await send(`${gateway.url}/process/p-1`, {})
  t.equal(answer.status, 502)
  const body = json(answer)
  t.same(body, { status: 'error', data: null, error: { message: 'Engine unreachable', code: 'fm5020' } })
  t.same(contract.errors('getProcessStatus', 502, body), [])
  // fm5020, not fm5040: the refused connection answered, not the route's 60 s timeout; the bound only keeps it far from that.
  t.ok(Date.now() - started < 30_000, 'no waiting for the timeout')
})

t.test('an engine failure that is no error record, or a success that is not JSON, answers 502 fm5021', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.post('/context', async (_request, reply) => reply.code(503).type('text/html').send('<html>Service Unavailable</html>'))
    app.post('/appclose', async (_request, reply) => reply.type('application/json').send('{"status": "OK"'))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const html = await send(`${gateway.url}/context`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(html.status, 502)
  t.match(json(html), { status: 'error', data: null, error: { code: 'fm5021', message: /503 with text\/html/ } })
  const truncated = await send(`${gateway.url}/appclose`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
  t.equal(truncated.status, 502)
  t.match(json(truncated), { status: 'error', error: { code: 'fm5021', message: /not JSON/ } })
})

t.test('the route table lives in the endpoint cache: the proxy reads it on every request, and an eviction rebuilds it', async (t) => {
  const engine = await startFakeEngine(t, (app) => {
    app.get('/process/:processInstanceId', async (request) => ({ tasks: [], processStatus: `seen at ${request.url}` }))
    app.get('/moved/:processInstanceId', async (request) => ({ tasks: [], processStatus: `seen at ${request.url}` }))
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const statusOf = async (): Promise<unknown> =>
    (json(await send(`${gateway.url}/process/p-1`, {})).data as { processStatus: unknown }).processStatus
  t.equal(await statusOf(), 'seen at /process/p-1')

  const endpointCache = gateway.app.caches.cache<ProxyRouteTable>('endpoint')
  const cached = endpointCache.get(ROUTE_TABLE_KEY)
  t.ok(cached, 'the first request put the table in the cache')
  const key = routeKey('GET', '/process/:processInstanceId')
  const moved = new Map(cached)
  moved.set(key, { ...cached!.get(key)!, enginePath: (params) => `/moved/${params.processInstanceId ?? ''}` })
  endpointCache.set(ROUTE_TABLE_KEY, moved)
  t.equal(await statusOf(), 'seen at /moved/p-1', 'a changed cached table is used at once')

  gateway.app.caches.evict('endpoint')
  t.equal(await statusOf(), 'seen at /process/p-1', 'after the eviction the table is built again from the generated one')
})
