import { createServer, type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import t, { type Test } from 'tap'
import { capturingLogger, openTestStore, startService, testConfig } from '../../services/testing/harness.js'
import { deployFetchFunction } from '../../services/testing/fetch-function.js'
import { HR, workflowClient } from '../../services/testing/workflow.js'
import type { OtlpProtocol } from '../../lib/config/config.js'

interface Received {
  path: string
  contentType: string
  body: Buffer
  headers: IncomingHttpHeaders
}

/** An HTTP server that records what it is sent and answers 200 `{}`: the OTLP receiver, and the flow function's partner. */
async function recordingServer(t: Test): Promise<{ url: string; port: number; received: Received[] }> {
  const received: Received[] = []
  const server = createServer((request, response) => {
    const chunks: Buffer[] = []
    request.on('data', (chunk: Buffer) => chunks.push(chunk))
    request.on('end', () => {
      received.push({
        path: request.url ?? '',
        contentType: request.headers['content-type'] ?? '',
        body: Buffer.concat(chunks),
        headers: request.headers,
      })
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())))
  const { port } = server.address() as AddressInfo
  return { url: `http://127.0.0.1:${port}`, port, received }
}

interface ExportedSpan {
  service: string
  traceId: string
  spanId: string
  parentSpanId: string
  name: string
}

/** OTLP/JSON ids are hex; some encoders send base64: both become hex. */
function hexId(id: string | undefined): string {
  if (id === undefined || id === '') return ''
  return /^[0-9a-f]+$/.test(id) ? id : Buffer.from(id, 'base64').toString('hex')
}

function decodeJsonExport(body: Buffer): ExportedSpan[] {
  interface Export {
    resourceSpans: Array<{
      resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> }
      scopeSpans: Array<{ spans: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string }> }>
    }>
  }
  const decoded = JSON.parse(body.toString('utf8')) as Export
  return decoded.resourceSpans.flatMap((resourceSpans) => {
    const service = resourceSpans.resource.attributes.find((attribute) => attribute.key === 'service.name')?.value.stringValue ?? ''
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        service,
        traceId: hexId(span.traceId),
        spanId: hexId(span.spanId),
        parentSpanId: hexId(span.parentSpanId),
        name: span.name,
      })),
    )
  })
}

async function tracedServices(t: Test, protocol: OtlpProtocol) {
  const receiver = await recordingServer(t)
  const partner = await recordingServer(t)
  const store = await openTestStore(t)
  const ann = await deployFetchFunction(store)
  const telemetry = { ...testConfig().telemetry, otlpEndpoint: receiver.url, otlpProtocol: protocol }
  const engineLog = capturingLogger()
  const engine = await startService(t, 'engine', {
    store,
    logger: engineLog.logger,
    config: { telemetry, flowHttp: { allowedHosts: [`127.0.0.1:${partner.port}`], forwardHeaders: [] } },
  })
  const gateway = await startService(t, 'gateway', { store, config: { engineUrl: engine.url, telemetry } })
  return { receiver, partner, engine, gateway, ann, engineLog }
}

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736'
const CLIENT_SPAN = '00f067aa0ba902b7'

t.test(
  'one trace from the client traceparent through gateway, engine, store calls and the function outbound http (http/json)',
  async (t) => {
    const { receiver, partner, engine, gateway, ann, engineLog } = await tracedServices(t, 'http/json')
    const client = workflowClient(t, gateway.url, 'gateway')
    const answer = await client.call<{ status: string }>('executeExternalFunction', 'POST', '/external/function/fetch/execute', {
      user: ann.userId,
      body: { ...HR, inputParams: { url: `${partner.url}/orders` } },
      headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` },
    })
    t.equal(answer.status, 200)
    t.match(answer.headers.get('traceparent'), new RegExp(`^00-${TRACE_ID}-[0-9a-f]{16}-01$`), 'the answer names the trace')
    await Promise.all([gateway.app.tracing!.flush(), engine.app.tracing!.flush()])

    t.ok(
      receiver.received.every((request) => request.path === '/v1/traces' && request.contentType.startsWith('application/json')),
      'OTLP/JSON posts to /v1/traces',
    )
    const spans = receiver.received.flatMap((request) => decodeJsonExport(request.body)).filter((span) => span.traceId === TRACE_ID)
    const route = 'POST /external/function/:functionId/execute'
    const gatewaySpan = spans.find((span) => span.service === 'workflow-gateway' && span.name === route)
    const engineSpan = spans.find((span) => span.service === 'workflow-engine' && span.name === route)
    t.ok(gatewaySpan, 'the gateway span, named by its route template')
    t.ok(engineSpan, 'the engine span, named by its route template')
    t.equal(gatewaySpan?.parentSpanId, CLIENT_SPAN, "the gateway continues the client's span")
    t.equal(engineSpan?.parentSpanId, gatewaySpan?.spanId, 'the engine continues the gateway span')
    const storeSpans = spans.filter(
      (span) => span.service === 'workflow-engine' && /^(findOne|find|aggregate|applyAtomically) /.test(span.name),
    )
    t.ok(storeSpans.length > 0, 'store calls are spans of the trace')
    const outbound = spans.find((span) => span.service === 'workflow-engine' && span.name === 'GET')
    t.ok(outbound, 'the outbound call is a client span')

    const call = partner.received.find((request) => request.path === '/orders')
    t.equal(
      call?.headers.traceparent,
      `00-${TRACE_ID}-${outbound?.spanId}-01`,
      'the partner is called with the trace context of the outbound span',
    )

    const completed = engineLog.lines.find((line) => line.msg === 'request completed' && line.trace_id === TRACE_ID)
    t.ok(completed, 'the engine request log line carries trace_id')
    t.equal(completed?.span_id, engineSpan?.spanId, 'and the span_id of the request span')
  },
)

t.test('by default spans are posted as OTLP protobuf to /v1/traces, with the service names', async (t) => {
  const { receiver, engine, gateway } = await tracedServices(t, 'http/protobuf')
  const answer = await fetch(`${gateway.url}/liveness`, { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` } })
  t.equal(answer.status, 200)
  t.equal((await fetch(`${engine.url}/liveness`, { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` } })).status, 200)
  await Promise.all([gateway.app.tracing!.flush(), engine.app.tracing!.flush()])
  t.ok(receiver.received.length > 0, 'spans were exported')
  const traceBytes = Buffer.from(TRACE_ID, 'hex')
  for (const request of receiver.received) {
    t.equal(request.path, '/v1/traces')
    t.equal(request.contentType, 'application/x-protobuf')
  }
  const all = Buffer.concat(receiver.received.map((request) => request.body))
  t.ok(all.includes(traceBytes), 'the client trace id, as protobuf bytes')
  t.ok(all.includes(Buffer.from('workflow-gateway')) && all.includes(Buffer.from('workflow-engine')), 'both services')
  t.ok(all.includes(Buffer.from('GET /liveness')), 'span named by route')
})

t.test('without OTEL_EXPORTER_OTLP_ENDPOINT nothing traces', async (t) => {
  const engine = await startService(t, 'engine')
  t.equal(engine.app.tracing, null)
  const answer = await fetch(`${engine.url}/liveness`, { headers: { traceparent: `00-${TRACE_ID}-${CLIENT_SPAN}-01` } })
  t.match(answer.headers.get('traceparent'), new RegExp(`^00-${TRACE_ID}-`), 'the trace context is still kept and echoed')
})
