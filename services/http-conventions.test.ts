import t from 'tap'
import { capturingLogger, startService } from './testing/harness.js'

for (const kind of ['engine', 'gateway'] as const) {
  t.test(`${kind}: x-request-id is kept when sent and generated otherwise, on every answer`, async (t) => {
    const { url } = await startService(t, kind)
    const kept = await fetch(`${url}/liveness`, { headers: { 'x-request-id': 'req-42' } })
    t.equal(kept.headers.get('x-request-id'), 'req-42')
    const generated = await fetch(`${url}/liveness`)
    t.match(generated.headers.get('x-request-id'), /^[0-9a-f-]{36}$/)
    const notFound = await fetch(`${url}/no/such/route`, { headers: { 'x-request-id': 'req-43' } })
    t.equal(notFound.status, 404)
    t.equal(notFound.headers.get('x-request-id'), 'req-43', 'error answers carry it too')
  })

  t.test(`${kind}: traceparent continues the caller's trace or starts one`, async (t) => {
    const { url } = await startService(t, kind)
    const continued = await fetch(`${url}/liveness`, {
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
    })
    t.match(continued.headers.get('traceparent'), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/)
    const started = await fetch(`${url}/liveness`)
    t.match(started.headers.get('traceparent'), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
  })

  t.test(`${kind}: Swagger UI at /docs and the contract at /docs/json`, async (t) => {
    const { url } = await startService(t, kind)
    const ui = await fetch(`${url}/docs/`)
    t.equal(ui.status, 200)
    t.match(ui.headers.get('content-type'), /text\/html/)
    t.match(await ui.text(), /swagger/i)
    const json = (await (await fetch(`${url}/docs/json`)).json()) as { openapi: string; paths: Record<string, unknown> }
    t.match(json.openapi, /^3\.1/)
    t.ok(json.paths['/liveness'], 'the served document is the contract')
  })

  t.test(`${kind}: log lines of a request with lplogclientid carry [CI: id] and reqId`, async (t) => {
    const { logger, lines } = capturingLogger('info')
    const { url } = await startService(t, kind, { logger })
    await fetch(`${url}/liveness`, { headers: { lplogclientid: 'client-7', 'x-request-id': 'trace-me' } })
    await fetch(`${url}/liveness`, { headers: { 'x-request-id': 'other' } })
    const mine = lines.filter((line) => line.reqId === 'trace-me')
    t.ok(mine.length >= 2, 'incoming and completed lines are logged')
    for (const line of mine) t.match(line.msg, /^\[CI: client-7\] /)
    for (const line of lines.filter((line) => line.reqId === 'other')) t.notMatch(line.msg, /\[CI:/)
  })
}

t.test('the engine answers errors as raw records, the gateway in the envelope', async (t) => {
  const engine = await startService(t, 'engine')
  const gateway = await startService(t, 'gateway')
  const raw = (await (await fetch(`${engine.url}/nowhere`)).json()) as Record<string, unknown>
  t.match(raw, { statusCode: 404, type: 'business', category: 'error', code: 'wm4004' })
  const enveloped = (await (await fetch(`${gateway.url}/nowhere`)).json()) as Record<string, unknown>
  t.match(enveloped, { status: 'customerror', data: null, error: { code: 'fm4004' } })
})
