import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { openTestStore } from '../../testing/harness.js'
import { deployExample } from '../../testing/models.js'
import { createTestUser } from '../../testing/users.js'
import type { Store } from '../../../store/port.js'
import { RuntimeError } from '../../../runtime/types.js'
import { decodeAdditionalHeaders } from './additional-headers.js'
import { disallowedOperator } from './data-filter.js'
import { StoreFlowHost } from './host.js'
import { modelRepository } from '../models/repository.js'
import { storedLookups } from '../models/service.js'
import { OutboundPolicy } from './outbound-policy.js'
import { UnitOfWork } from './unit-of-work.js'

type Tap = Parameters<Parameters<typeof t.test>[0]>[0]

/** The local test servers are private addresses: the policy lists 127.0.0.1. */
function outbound(t: Tap) {
  const policy = new OutboundPolicy({ allowedHosts: ['127.0.0.1'], forwardHeaders: [], ownPorts: () => [] })
  const dispatcher = policy.dispatcher()
  t.teardown(() => dispatcher.close())
  return { policy, dispatcher }
}

/** A flow host over `store` for a tenant of organization acme: the app `appId`, with no app functions. */
function hostOver(t: Tap, store: Store, appId: string, additionalHeaders: Record<string, string> = {}): StoreFlowHost {
  return new StoreFlowHost({
    store,
    ...outbound(t),
    unitOfWork: new UnitOfWork(store),
    appId,
    organizationId: 'acme',
    appFunctions: new Map(),
    deployed: storedLookups(modelRepository(store), { organizationId: 'acme', appId }),
    additionalHeaders,
  })
}

/** A flow host of the HR app over a new test store. */
async function hostFor(t: Tap, additionalHeaders: Record<string, string> = {}) {
  const store = await openTestStore(t)
  return { store, host: hostOver(t, store, 'hr', additionalHeaders) }
}

/** A local HTTP server that answers with what it received. */
async function echoServer(
  t: Tap,
  answer: (headers: IncomingHttpHeaders, body: string) => { status: number; type: string; body: string } | 'hang',
) {
  const server = createServer((request, response) => {
    let body = ''
    request.on('data', (chunk: Buffer) => (body += chunk.toString()))
    request.on('end', () => {
      const reply = answer(request.headers, body)
      if (reply === 'hang') return
      response.writeHead(reply.status, { 'content-type': reply.type })
      response.end(reply.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`
}

t.test('additionalheaders: a URL-encoded JSON object of headers, anything else gives none', async (t) => {
  const encode = (value: unknown) => encodeURIComponent(JSON.stringify(value))
  t.same(decodeAdditionalHeaders(encode({ 'X-Tenant': 'acme', 'x-count': 3 })), { 'x-tenant': 'acme', 'x-count': '3' })
  t.same(
    decodeAdditionalHeaders(encode({ host: 'evil', 'Content-Length': '1', 'x-ok': 'yes', 'bad name': 'x', nested: { a: 1 } })),
    { 'x-ok': 'yes' },
    'framing headers, invalid names and objects are dropped',
  )
  t.same(decodeAdditionalHeaders(encode({ 'x-crlf': 'a\r\nInjected: 1' })), {}, 'a value that would split the header is dropped')
  for (const raw of [undefined, '', '%E0%A4%A', 'not json', encode([1, 2]), encode('text'), encode(null)])
    t.same(decodeAdditionalHeaders(raw), {}, `${String(raw)} gives none`)
})

t.test('filters may use comparison and logic operators only', async (t) => {
  t.equal(disallowedOperator({ days: { $gte: 5 }, $or: [{ a: { $in: [1] } }, { b: { $regex: '^x', $options: 'i' } }] }), undefined)
  t.equal(disallowedOperator({ $where: 'sleep(1000)' }), '$where')
  t.equal(disallowedOperator({ a: { $elemMatch: { $expr: { $gt: ['$a', 1] } } } }), '$expr', 'found at any depth')
  t.equal(disallowedOperator({ $and: [{ a: 1 }, { b: { $function: {} } }] }), '$function')
})

t.test("http sends the function's request with the additional headers and reads JSON answers", async (t) => {
  const url = await echoServer(t, (headers, body) => ({ status: 201, type: 'application/json', body: JSON.stringify({ headers, body }) }))
  const { host } = await hostFor(t, { 'x-tenant': 'acme', 'x-override': 'context' })
  const response = await host.http({
    method: 'post',
    url: `${url}/book`,
    headers: { 'X-Override': 'function' },
    body: { days: 3 },
    timeoutMs: 2000,
  })
  t.equal(response.status, 201)
  const echoed = response.body as { headers: Record<string, string>; body: string }
  t.equal(echoed.headers['x-tenant'], 'acme', "the request's additionalheaders travel along")
  t.equal(echoed.headers['x-override'], 'function', "the function's own header wins")
  t.equal(echoed.headers['content-type'], 'application/json')
  t.same(JSON.parse(echoed.body), { days: 3 })
  t.match(response.headers, { 'content-type': 'application/json' })
})

t.test('http failures are technical runtime errors: timeout, unreachable, not http', async (t) => {
  const url = await echoServer(t, () => 'hang')
  const { host } = await hostFor(t)
  // The server never answers: only the timeout can end the call, and the message names it.
  await t.rejects(host.http({ method: 'GET', url, headers: {}, timeoutMs: 200 }), {
    name: 'RuntimeError',
    kind: 'technical',
    message: /no answer within 200 ms/,
  })
  await t.rejects(host.http({ method: 'GET', url: 'http://127.0.0.1:1/', headers: {}, timeoutMs: 1000 }), {
    name: 'RuntimeError',
    kind: 'technical',
  })
  await t.rejects(host.http({ method: 'GET', url: 'file:///etc/passwd', headers: {}, timeoutMs: 1000 }), {
    kind: 'technical',
    message: /not http/,
  })
})

t.test("data nodes work on the app's data collections through the registry", async (t) => {
  const { store, host } = await hostFor(t)
  await deployExample(store, 'leave-bookings', { appId: 'hr', organizationId: 'acme' })
  t.match(await host.data({ operation: 'insert', collection: 'Leave bookings', doc: { businessKey: 'LR-1', days: 3 } }), {
    insertedId: /\w+/,
  })
  await host.data({ operation: 'insert', collection: 'Leave bookings', doc: { businessKey: 'LR-2', days: 12 } })
  t.match(await host.data({ operation: 'find', collection: 'Leave bookings', filter: { days: { $gt: 5 } } }), [
    { businessKey: 'LR-2', days: 12 },
  ])
  t.match(await host.data({ operation: 'update', collection: 'Leave bookings', filter: { businessKey: 'LR-1' }, set: { days: 4 } }), {
    matchedCount: 1,
    modifiedCount: 1,
  })
  t.match(await host.data({ operation: 'find', collection: 'Leave bookings', filter: { businessKey: 'LR-1' } }), [{ days: 4 }])
  t.match(await host.data({ operation: 'delete', collection: 'Leave bookings', filter: { businessKey: 'LR-2' } }), { deletedCount: 1 })

  await t.rejects(host.data({ operation: 'find', collection: 'Nope' }), { kind: 'technical', message: 'Data collection not found: Nope' })
  await t.rejects(host.data({ operation: 'find', collection: 'Leave bookings', filter: { $where: 'true' } }), {
    kind: 'technical',
    message: /\$where/,
  })
  await t.rejects(host.data({ operation: 'update', collection: 'Leave bookings', filter: {}, set: { $inc: { days: 1 } } }), {
    kind: 'technical',
    message: /may not start with \$: \$inc/,
  })
  await t.rejects(host.data({ operation: 'insert', collection: 'Leave bookings', doc: 'text' }), {
    kind: 'technical',
    message: /must be an object/,
  })
  await t.rejects(
    host.data({ operation: 'insert', collection: 'Leave bookings', doc: { businessKey: 'LR-1' } }),
    { kind: 'technical', message: /duplicate key/ },
    'store errors (the unique index) are technical failures',
  )
  const other = hostOver(t, store, 'sales')
  await t.rejects(other.data({ operation: 'find', collection: 'Leave bookings' }), RuntimeError, 'another app does not see the collection')
})

t.test('constants and users come from the app only', async (t) => {
  const { store, host } = await hostFor(t)
  await deployExample(store, 'hr-constants', { appId: 'hr', organizationId: 'acme' })
  await deployExample(store, 'hr-constants', { appId: 'sales', organizationId: 'acme' })
  t.equal(await host.constant('vatRate'), '0.2')
  t.equal(await host.constant('missing'), undefined)
  const ann = await createTestUser(store, { appId: 'hr', organizationId: 'acme', fullName: 'Ann Manager', swimlanes: ['manager'] })
  const stranger = await createTestUser(store, { appId: 'sales', organizationId: 'acme' })
  t.match(await host.findUser(ann.userId), { userId: ann.userId, fullName: 'Ann Manager', swimlanes: ['manager'] })
  t.equal(await host.findUser(stranger.userId), null)
  t.equal(await host.findUser('nobody'), null)
})
