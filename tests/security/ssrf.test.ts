/**
 * No SSRF (docs/reference/flow-functions.md#outbound-http). A flow function's `http` node reaches only public addresses unless
 * FLOW_HTTP_ALLOWED_HOSTS lists the host; the check is on the address connected to, so no spelling
 * of loopback gets through, and the service's own ports are never reached. Context headers
 * (`additionalheaders`) go only to allowed hosts, the identity-bearing ones only when
 * FLOW_HTTP_FORWARD_HEADERS lists them. Every call carries an `idempotency-key`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { OutboundPolicy } from '../../services/engine/flow-host/outbound-policy.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { deployFetchFunction } from '../../services/testing/fetch-function.js'
import { HR, workflowClient } from '../../services/testing/workflow.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** A local server that records what reached it and answers with the headers it got. */
async function recordingServer(
  t: Tap,
  answer: (url: string) => { status: number; headers?: Record<string, string> } = () => ({ status: 200 }),
) {
  const received: Array<{ url: string; headers: IncomingHttpHeaders }> = []
  const server = createServer((request, response) => {
    received.push({ url: request.url ?? '', headers: request.headers })
    const { status, headers } = answer(request.url ?? '')
    response.writeHead(status, { 'content-type': 'application/json', ...headers })
    response.end(JSON.stringify({ headers: request.headers }))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return { port: (server.address() as AddressInfo).port, received }
}

async function setUp(t: Tap) {
  const target = await recordingServer(t)
  const allowed = await recordingServer(t, (url) =>
    url === '/redirect' ? { status: 302, headers: { location: `http://127.0.0.1:${target.port}/after-redirect` } } : { status: 200 },
  )
  const store = await openTestStore(t)
  const ann = await deployFetchFunction(store)
  const engine = await startService(t, 'engine', {
    store,
    config: { flowHttp: { allowedHosts: [`127.0.0.1:${allowed.port}`, `localhost:${allowed.port}`], forwardHeaders: ['authorization'] } },
  })
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  const client = workflowClient(t, gateway.url, 'gateway')
  const fetchThrough = (url: string, additionalHeaders?: Record<string, string>) =>
    client.call<{
      status: string
      data: { output?: { answer?: { status: number; body: { headers: IncomingHttpHeaders } } } } | null
      error?: { message: string }
    }>('executeExternalFunction', 'POST', '/external/function/fetch/execute', {
      user: ann.userId,
      body: { ...HR, inputParams: { url } },
      ...(additionalHeaders ? { headers: { additionalheaders: encodeURIComponent(JSON.stringify(additionalHeaders)) } } : {}),
    })
  return { target, allowed, enginePort: Number(new URL(engine.url).port), fetchThrough }
}

t.test('http nodes through the gateway', async (t) => {
  const { target, allowed, enginePort, fetchThrough } = await setUp(t)

  t.test('every private or loopback spelling of a host that is not allowed is refused before connecting', async (t) => {
    const port = target.port
    const refused = [
      `http://127.0.0.1:${port}/`,
      `http://localhost:${port}/`,
      `http://2130706433:${port}/`,
      `http://0x7f.1:${port}/`,
      `http://017700000001:${port}/`,
      `http://0.0.0.0:${port}/`,
      `http://[::ffff:127.0.0.1]:${port}/`,
      `http://[::1]:${port}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://10.0.0.1/',
      'http://192.168.1.1/',
      'http://172.16.0.1/',
      `http://127.0.0.1:${enginePort}/external/process/changeStep`,
    ]
    for (const url of refused) {
      const answer = await fetchThrough(url)
      t.equal(answer.status, 500, `${url} is refused`)
      t.match(answer.body.error?.message, /not listed in FLOW_HTTP_ALLOWED_HOSTS|this service itself/, `${url}: the reason is given`)
    }
    t.equal(target.received.length, 0, 'nothing reached the local server')
  })

  t.test("an allowed host reaches a server on 127.0.0.1, but never the service's own port", async (t) => {
    const answer = await fetchThrough(`http://127.0.0.1:${allowed.port}/hello`)
    t.equal(answer.status, 200)
    t.equal(answer.body.data?.output?.answer?.status, 200)
    t.equal(allowed.received.at(-1)?.url, '/hello')
    const byName = await fetchThrough(`http://localhost:${allowed.port}/by-name`)
    t.equal(byName.body.data?.output?.answer?.status, 200, 'an allowed name resolving to loopback')
    const policy = new OutboundPolicy({ allowedHosts: ['127.0.0.1'], forwardHeaders: [], ownPorts: () => [enginePort] })
    t.match(
      policy.refusal('127.0.0.1', '127.0.0.1', enginePort),
      /this service itself/,
      "allowing 127.0.0.1 does not open the engine's port",
    )
    t.equal(policy.refusal('127.0.0.1', '127.0.0.1', allowed.port), undefined)
  })

  t.test('a redirect is not followed to a host that is not allowed', async (t) => {
    const before = target.received.length
    const answer = await fetchThrough(`http://127.0.0.1:${allowed.port}/redirect`)
    t.equal(answer.body.data?.output?.answer?.status, 302, 'the function sees the redirect itself')
    t.equal(target.received.length, before, 'the redirect target was not called')
  })

  t.test('context headers go only to allowed hosts; authorization, cookie and user only when listed', async (t) => {
    const answer = await fetchThrough(`http://127.0.0.1:${allowed.port}/headers`, {
      'x-tenant': 'acme',
      authorization: 'Bearer secret',
      cookie: 'sid=1',
      user: 'someone-else',
    })
    const headers = answer.body.data?.output?.answer?.body.headers ?? {}
    t.equal(headers['x-tenant'], 'acme', 'an ordinary context header goes along')
    t.equal(headers.authorization, 'Bearer secret', 'authorization: listed in FLOW_HTTP_FORWARD_HEADERS')
    t.equal(headers.cookie, undefined, 'cookie: not listed, not sent')
    t.equal(headers.user, undefined, 'user: not listed, not sent')
    const policy = new OutboundPolicy({ allowedHosts: ['*.partner.example', 'api.example:8443'], forwardHeaders: [], ownPorts: () => [] })
    const context = { 'x-tenant': 'acme', authorization: 'Bearer secret' }
    t.same(policy.contextHeadersFor(new URL('https://public.example/'), context), {}, 'a host that is not allowed gets none')
    t.same(policy.contextHeadersFor(new URL('https://eu.partner.example/'), context), { 'x-tenant': 'acme' }, '*. allows subdomains')
    t.same(policy.contextHeadersFor(new URL('https://api.example/'), context), {}, 'a listed port must match')
    t.same(policy.contextHeadersFor(new URL('https://api.example:8443/'), context), { 'x-tenant': 'acme' })
  })

  t.test('every call carries an idempotency-key; another run of a standalone function gets another', async (t) => {
    await fetchThrough(`http://127.0.0.1:${allowed.port}/one`)
    await fetchThrough(`http://127.0.0.1:${allowed.port}/two`)
    const [first, second] = allowed.received.slice(-2).map((request) => request.headers['idempotency-key'])
    t.match(first, /^[\w-]{32}$/)
    t.not(first, second)
  })
})
