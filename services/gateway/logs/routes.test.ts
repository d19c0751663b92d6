import t, { type Test } from 'tap'
import { request } from 'undici'
import type { Config } from '../../../lib/config/config.js'
import { signStudioToken } from '../../../plugins/identity/studio-token.js'
import { createLogger } from '../../../plugins/logging/logger.js'
import { LogRing, type LogRings, ringDestination } from '../../../plugins/logging/ring.js'
import { ContractChecker } from '../../testing/contract.js'
import type { Envelope } from '../../testing/gateway.js'
import { openEventStream } from '../../testing/event-stream.js'
import { startService } from '../../testing/harness.js'
import { waitUntil } from '../../testing/wait.js'

const SECRET = 'studio-secret-0123456789abcdef0123456789'
const HEARTBEAT_MS = 40
const LOG_CONFIG: Partial<Config> = { deploymentEnv: 'test', studioTokenSecret: SECRET, logHeartbeatMs: HEARTBEAT_MS }
const contract = new ContractChecker('gateway')

function tokenFor(clientId: string, claims: Record<string, unknown> = {}): string {
  return signStudioToken({ sub: clientId, exp: Math.floor(Date.now() / 1000) + 600, ...claims }, SECRET)
}

function streamHeaders(clientId: string): Record<string, string> {
  return { lplogclientid: clientId, studiotoken: tokenFor(clientId) }
}

/** Services whose info lines land in their rings, as in the all-in-one. */
async function startLogged(
  t: Test,
  kinds: Array<'gateway' | 'engine'>,
  config: Partial<Config> = LOG_CONFIG,
  rings: LogRings = { fm: new LogRing(), wfm: new LogRing() },
) {
  const started: Record<string, { url: string; app: Awaited<ReturnType<typeof startService>>['app'] }> = {}
  for (const kind of kinds) {
    const ring = kind === 'gateway' ? rings.fm : rings.wfm
    const logger = createLogger({ level: 'info', ...(ring ? { destination: ringDestination(ring) } : {}) })
    started[kind] = await startService(t, kind, { config, logger, logRings: rings })
  }
  return { started, rings }
}

t.test("the stream sends the client's lines only, without timestamps, with the SSE headers", async (t) => {
  const { started, rings } = await startLogged(t, ['gateway'])
  const gateway = started.gateway!
  rings.fm!.push('2025-06-30T08:00:00.123Z [CI: c-1] a platform line from before the stream')
  rings.fm!.push('2025-06-30T08:00:00.124Z [CI: c-2] not mine')
  const stream = await openEventStream(`${gateway.url}/cloud/serviceLog/fm`, streamHeaders('c-1'))
  t.teardown(() => stream.close())
  t.equal(stream.response.status, 200)
  t.equal(stream.response.headers.get('content-type'), 'text/event-stream')
  t.equal(stream.response.headers.get('cache-control'), 'no-cache')
  t.equal(stream.response.headers.get('connection'), 'keep-alive')

  await fetch(`${gateway.url}/liveness`, { headers: { lplogclientid: 'c-1', 'x-request-id': 'mine' } })
  await fetch(`${gateway.url}/liveness`, { headers: { lplogclientid: 'c-2', 'x-request-id': 'theirs' } })
  await stream.waitFor((s) => s.events().some((event) => event.includes('"reqId":"mine"') && event.includes('request completed')))
  const events = stream.events()
  t.equal(events[0], '[CI: c-1] a platform line from before the stream', 'recent lines first, the leading timestamp removed')
  t.notOk(
    events.some((event) => event.includes('c-2') || event.includes('"theirs"')),
    "another client's lines are not sent",
  )
  const pinoLines = events.filter((event) => event.startsWith('{')).map((event) => JSON.parse(event) as Record<string, unknown>)
  t.ok(pinoLines.length >= 2)
  for (const line of pinoLines) {
    t.notOk('time' in line, 'pino timestamps removed')
    t.match(line.msg, /^\[CI: c-1\] /)
  }
})

t.test('a whitespace heartbeat is sent every LOG_HEARTBEAT_MS', async (t) => {
  const { started } = await startLogged(t, ['gateway'])
  const stream = await openEventStream(`${started.gateway!.url}/cloud/serviceLog/fm`, streamHeaders('quiet-client'))
  t.teardown(() => stream.close())
  await stream.waitFor((s) => s.received().split(' \n\n').length - 1 >= 3, 2000)
  // The stream's own request is logged for the client; apart from that line, only heartbeats.
  t.equal(
    stream
      .received()
      .replace(/^data: .*\n\n/gm, '')
      .trim(),
    '',
    'only whitespace while nothing else is logged for the client',
  )
})

t.test('the request is checked in the documented order: 400, then 500, then 401', async (t) => {
  const { started } = await startLogged(t, ['gateway'])
  const unconfigured = await startService(t, 'gateway', { config: { studioTokenSecret: SECRET } })
  const cases: Array<[string, string, Record<string, string>, number, string]> = [
    ['no lplogclientid', started.gateway!.url + '/cloud/serviceLog/fm', { studiotoken: tokenFor('c-1') }, 400, 'fm3040'],
    [
      'an unusable lplogclientid',
      started.gateway!.url + '/cloud/serviceLog/fm',
      { lplogclientid: 'has spaces', studiotoken: tokenFor('has spaces') },
      400,
      'fm3040',
    ],
    ['another service', started.gateway!.url + '/cloud/serviceLog/db', streamHeaders('c-1'), 400, 'fm3040'],
    ['no DEPLOYMENT_ENV', unconfigured.url + '/cloud/serviceLog/fm', streamHeaders('c-1'), 500, 'fm3041'],
    ['no studiotoken', started.gateway!.url + '/cloud/serviceLog/fm', { lplogclientid: 'c-1' }, 401, 'fm4011'],
    [
      'a token for another client',
      started.gateway!.url + '/cloud/serviceLog/fm',
      { lplogclientid: 'c-1', studiotoken: tokenFor('c-2') },
      401,
      'fm4011',
    ],
    [
      'an expired token',
      started.gateway!.url + '/cloud/serviceLog/fm',
      { lplogclientid: 'c-1', studiotoken: tokenFor('c-1', { exp: 1 }) },
      401,
      'fm4011',
    ],
    [
      'a token of another secret',
      started.gateway!.url + '/cloud/serviceLog/fm',
      { lplogclientid: 'c-1', studiotoken: signStudioToken({ sub: 'c-1' }, 'x'.repeat(40)) },
      401,
      'fm4011',
    ],
  ]
  for (const [name, url, headers, status, code] of cases) {
    const answer = await fetch(url, { headers })
    const body = (await answer.json()) as Envelope<null>
    t.equal(answer.status, status, name)
    t.equal(body.error?.code, code, name)
    t.same(contract.errors('streamServiceLog', status, body), [], `${name}: enveloped as documented`)
  }
})

t.test('200 connects and disconnects leave no listener, stream or timer behind', async (t) => {
  const { started, rings } = await startLogged(t, ['gateway'])
  const gateway = started.gateway!
  const timers = () => process.getActiveResourcesInfo().filter((resource) => resource === 'Timeout').length
  const timersBefore = timers()
  for (let round = 0; round < 20; round++) {
    const streams = await Promise.all(
      Array.from({ length: 10 }, () => openEventStream(`${gateway.url}/cloud/serviceLog/fm`, streamHeaders('c-1'))),
    )
    t.equal(rings.fm!.listenerCount >= 10, true, `round ${round}: the streams listen`)
    for (const stream of streams) stream.close()
  }
  await waitUntil(
    () => rings.fm!.listenerCount + gateway.app.logStreams.size,
    (open) => open === 0,
    3000,
    20,
  )
  t.equal(rings.fm!.listenerCount, 0, 'no ring listener left')
  t.equal(gateway.app.logStreams.size, 0, 'no open stream (each one clears its heartbeat timer when it ends)')
  t.ok(timers() <= timersBefore + 2, `no heartbeat timers left (${timersBefore} before, ${timers()} after)`)
})

t.test('closing the gateway ends its open streams', async (t) => {
  const { started, rings } = await startLogged(t, ['gateway'])
  const stream = await openEventStream(`${started.gateway!.url}/cloud/serviceLog/fm`, streamHeaders('c-1'))
  await started.gateway!.app.close()
  t.equal(rings.fm!.listenerCount, 0)
  t.equal(started.gateway!.app.logStreams.size, 0)
  stream.close()
})

t.test("the all-in-one streams the engine's lines (wfm) from memory", async (t) => {
  const { started } = await startLogged(t, ['engine', 'gateway'])
  const stream = await openEventStream(`${started.gateway!.url}/cloud/serviceLog/wfm`, streamHeaders('c-9'))
  t.teardown(() => stream.close())
  await fetch(`${started.engine!.url}/liveness`, { headers: { lplogclientid: 'c-9', 'x-request-id': 'engine-call' } })
  await stream.waitFor((s) => s.events().some((event) => event.includes('"reqId":"engine-call"')))
  t.notOk(
    stream.events().some((event) => event.includes('/cloud/serviceLog')),
    "the gateway's own lines are not in the engine's stream",
  )
})

t.test("a gateway in another process relays the engine's lines from LOG_SOURCE_WFM_URL", async (t) => {
  const { started } = await startLogged(t, ['engine'])
  const gateway = await startService(t, 'gateway', {
    config: { ...LOG_CONFIG, logSourceUrls: { fm: undefined, wfm: `${started.engine!.url}/internal/serviceLog` } },
  })
  const stream = await openEventStream(`${gateway.url}/cloud/serviceLog/wfm`, streamHeaders('c-5'))
  t.equal(stream.response.status, 200)
  // Without keep-alive: a kept-alive test connection would hold the engine's close for seconds.
  await (
    await request(`${started.engine!.url}/liveness`, { headers: { lplogclientid: 'c-5', 'x-request-id': 'relayed' }, reset: true })
  ).body.text()
  await (
    await request(`${started.engine!.url}/liveness`, { headers: { lplogclientid: 'c-6', 'x-request-id': 'not-relayed' }, reset: true })
  ).body.text()
  await stream.waitFor((s) => s.events().some((event) => event.includes('"reqId":"relayed"') && event.includes('request completed')))
  t.notOk(stream.events().some((event) => event.includes('not-relayed')))
  for (const event of stream.events()) t.notOk('time' in (JSON.parse(event) as object), 'no timestamps')
  stream.close()
})

t.test('a service in no process of ours: 500 fm3041 without a source, 502 fm3042 when the source fails', async (t) => {
  const without = await startService(t, 'gateway', { config: LOG_CONFIG })
  const unreachable = await startService(t, 'gateway', {
    config: { ...LOG_CONFIG, logSourceUrls: { fm: undefined, wfm: 'http://127.0.0.1:9/internal/serviceLog' } },
  })
  const engineWithoutRing = await startService(t, 'engine')
  const refusing = await startService(t, 'gateway', {
    config: { ...LOG_CONFIG, logSourceUrls: { fm: undefined, wfm: `${engineWithoutRing.url}/internal/serviceLog` } },
  })
  for (const [name, url, status, code] of [
    ['no LOG_SOURCE_WFM_URL', without.url, 500, 'fm3041'],
    ['an unreachable source', unreachable.url, 502, 'fm3042'],
    ['an engine that keeps no lines (500 wm5001 upstream)', refusing.url, 502, 'fm3042'],
  ] as const) {
    const answer = await fetch(`${url}/cloud/serviceLog/wfm`, { headers: streamHeaders('c-1') })
    t.equal(answer.status, status, name)
    t.equal(((await answer.json()) as Envelope<null>).error?.code, code, name)
  }
})
