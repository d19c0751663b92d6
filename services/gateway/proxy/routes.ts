/**
 * The gateway's proxy (docs/reference/gateway.md#the-proxy): every row of the generated proxy table
 * is an @fastify/http-proxy route forwarding to the engine over one kept-alive undici pool, with the
 * route's timeout, the gateway's correlation headers, and the engine's answer put in the envelope
 * (raw answers — file download bytes — streamed untouched). Request bodies are never parsed: one of
 * a declared length up to 64 KiB (a small upload too) is read whole and sent with its headers in one
 * write; larger and chunked ones are streamed through, metered against the route's limit (1 MiB;
 * uploads MAX_UPLOAD_BYTES), the gateway answering 413 itself beyond it. An engine of the same thread
 * (the all-in-one's) gets what the gateway has read whole in-process instead (in-process-engine.ts):
 * the same headers, answers, timeouts and failures, without reply-from, undici or a socket; what
 * streams (raw answers, long polls, bodies still arriving) still goes over HTTP.
 */
import type { IncomingHttpHeaders } from 'node:http'
import httpProxy from '@fastify/http-proxy'
import type { FastifyReplyFromHooks } from '@fastify/reply-from'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RawServerBase } from 'fastify'
import fp from 'fastify-plugin'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import { type Dispatcher, Pool } from 'undici'
import { uploadBodyLimit } from '../../../plugins/service-base/server-options.js'
import { proxyRoutes } from '../../../openapi/generated/proxy-routes.js'
import type { NamedCache } from '../../../plugins/cache/registry.js'
import type { Config } from '../../../lib/config/config.js'
import type { GatewayMetrics } from '../../../lib/telemetry/gateway-metrics.js'
import { formatTraceparent } from '../../../plugins/correlation/trace-context.js'
import type { ErrorFactory, ServiceError } from '../../../plugins/errors/service-error.js'
import { envelopeBytesOfEngineAnswer, InvalidEngineAnswer, streamsUntouched } from './answer.js'
import { meteredBody, overflowed } from './body-meter.js'
import { type Correlation, clientAnswerHeaders, engineRequestHeaders, engineRequestTextHeaders } from './headers.js'
import { buildRouteTable, type ForwardingOf, type ProxyRouteTable, type ProxyTarget, routeKey } from './route-table.js'
import { LongPolls } from './long-polls.js'
import { forwardInProcess, type InProcessEngine } from './in-process-engine.js'

/** The type the engine is told a body read whole has: the client's, or bytes of no declared type. */
function bodyContentType(request: FastifyRequest): string {
  return request.headers['content-type'] ?? 'application/octet-stream'
}

/** The key of the route table in the `endpoint` cache. */
export const ROUTE_TABLE_KEY = 'proxy-routes'

/** An engine that does not accept a connection within this time counts as unreachable (502). */
const CONNECT_TIMEOUT_MS = 5_000

/** Bounds the sockets to the engine; requests beyond it queue in the pool. */
const MAX_ENGINE_CONNECTIONS = 256

/** reply-from's timeout errors (its name for undici's headers timeout) and undici's body timeout. */
const TIMEOUT_CODES = new Set(['FST_REPLY_FROM_GATEWAY_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])

export interface ProxyPluginOptions {
  config: Pick<Config, 'engineUrl' | 'engineSocket' | 'proxyTimeoutScale' | 'development' | 'maxUploadBytes'>
  /** The gateway's `endpoint` cache (docs/reference/gateway.md#caches): it holds the route table, so an eviction rebuilds it. */
  endpointCache: NamedCache<ProxyRouteTable>
  /** Upstream durations and failures are recorded here; null, nothing is measured. */
  metrics?: GatewayMetrics | null
  /** The engine of this thread, reached without HTTP (the all-in-one); absent, every request goes to ENGINE_URL. */
  inProcessEngine?: InProcessEngine | undefined
}

declare module 'fastify' {
  interface FastifyRequest {
    /** `performance.now()` when the request was forwarded to the engine (0 when metrics are off). */
    forwardedAt: number
  }
}

/**
 * What reply-from hands to `onResponse` with undici: its typings call it a ServerResponse, but it is
 * the engine's status, headers and undici's body stream.
 */
interface EngineResponse {
  statusCode: number
  headers: IncomingHttpHeaders
  stream: Dispatcher.ResponseData['body']
}
type AnyReply = FastifyReply<never, RawServerBase>

async function proxyPlugin(fastify: FastifyInstance, options: ProxyPluginOptions): Promise<void> {
  const fail: ErrorFactory<GatewayErrorCode> = fastify.fail
  const { config, endpointCache } = options
  const metrics = options.metrics ?? null
  fastify.decorateRequest('forwardedAt', 0)
  const engine = new URL(config.engineUrl)

  // With ENGINE_SOCKET the pool connects to the engine's Unix socket; ENGINE_URL still gives the
  // host header and the path prefix.
  const pool = new Pool(engine.origin, {
    connections: MAX_ENGINE_CONNECTIONS,
    connectTimeout: CONNECT_TIMEOUT_MS,
    socketPath: config.engineSocket,
  })
  fastify.addHook('onClose', async () => pool.close())
  const longPolls = new LongPolls()
  const engineDispatcher = pool.compose(longPolls.interceptor())
  const inProcess = options.inProcessEngine

  function failure(request: { body: unknown }, error: unknown): ServiceError {
    // The client's body went over the route's limit while it was streamed: the engine never saw all of it.
    if (overflowed(request)) return fail('fm4013', { cause: error })
    const code = (error as { code?: unknown }).code
    const timedOut = typeof code === 'string' && TIMEOUT_CODES.has(code)
    return upstreamFailure(timedOut ? 'fm5040' : 'fm5020', error)
  }

  /** A failure of the engine itself (not of the client's body), counted by the code answered. */
  function upstreamFailure(code: 'fm5020' | 'fm5021' | 'fm5040', cause: unknown, args?: unknown[]): ServiceError {
    metrics?.upstreamFailed(code)
    return fail(code, { cause, ...(args ? { args } : {}) })
  }

  /** Streams a raw success through; reads anything else and answers it in the envelope. */
  async function answer(reply: AnyReply, response: EngineResponse, raw: boolean): Promise<void> {
    const contentType = response.headers['content-type']
    if (streamsUntouched(response.statusCode, contentType, raw)) {
      reply.send(response.stream)
      return
    }
    let body: Uint8Array
    try {
      body = await response.stream.bytes()
    } catch (error) {
      reply.send(failure(reply.request, error))
      return
    }
    sendEnveloped(reply, response.statusCode, contentType, body)
  }

  /** An engine answer read whole, in the envelope. */
  function sendEnveloped(reply: AnyReply, statusCode: number, contentType: string | string[] | undefined, body: Uint8Array): void {
    try {
      const envelope = envelopeBytesOfEngineAnswer(statusCode, contentType, body, config.development)
      // Replaces the engine's length (copied with its headers) rather than removing it: a delete
      // would cost more, and Fastify would then measure the payload all the same.
      reply.header('content-length', envelope.length)
      reply.type('application/json; charset=utf-8').send(envelope)
    } catch (error) {
      if (!(error instanceof InvalidEngineAnswer)) throw error
      reply.send(upstreamFailure('fm5021', error, [error.message]))
    }
  }

  /** The engine answered the request, over HTTP or in-process: counted by route, with the time since it was forwarded. */
  function countAnswered(request: Pick<FastifyRequest, 'routeOptions' | 'forwardedAt'>): void {
    if (metrics) metrics.upstreamAnswered(request.routeOptions.url ?? '', (performance.now() - request.forwardedAt) / 1000)
  }

  type RewriteRequestHeaders = NonNullable<FastifyReplyFromHooks['rewriteRequestHeaders']>
  /** The correlation headers the engine gets: the gateway's request id, and its span as the parent. */
  const correlationOf = (request: Pick<FastifyRequest, 'id' | 'traceContext'>): Correlation => ({
    requestId: request.id,
    traceparent: formatTraceparent(request.traceContext),
  })
  const engineHeaders: RewriteRequestHeaders = (request, headers) =>
    longPolls.headersOf(request, engineRequestHeaders(headers, correlationOf(request)))

  // The options every route shares; http-proxy's own rewriteHeaders (it rewrites a `location` and
  // cleans header values) is left out: the engine sends no `location`, and clientAnswerHeaders cleans.
  const forwarding: FastifyReplyFromHooks = {
    // One retry, for an idempotent request (GET without a body) whose kept-alive socket the engine
    // closed just as it was reused; reply-from then skips its retry-on-503 loop too.
    retriesCount: 1,
    rewriteRequestHeaders: engineHeaders,
    rewriteHeaders: (headers) => clientAnswerHeaders(headers),
    onError: (reply, { error }) => reply.send(failure(reply.request, error)),
  }
  const replyOptions: ForwardingOf = ({ timeoutMs, raw }) => ({
    ...forwarding,
    timeout: timeoutMs,
    // An unexpected failure while answering goes to the error handler (500 fm5000), never unhandled.
    onResponse: (request, reply, response) => {
      countAnswered(request)
      void answer(reply as AnyReply, response as unknown as EngineResponse, raw).catch((error: unknown) => reply.send(error))
    },
  })
  const tableOptions = { timeoutScale: config.proxyTimeoutScale, enginePathPrefix: engine.pathname.replace(/\/+$/, ''), replyOptions }
  const routeTable = (): ProxyRouteTable => endpointCache.getOrCreate(ROUTE_TABLE_KEY, () => buildRouteTable(proxyRoutes, tableOptions))

  /**
   * A request read whole, handed to the in-process engine: its headers as reply-from would send them
   * (the client's, `host` the engine's, the body's length and type), the answer's as it would copy
   * them back.
   */
  async function answerInProcess(
    engineApp: InProcessEngine,
    request: FastifyRequest,
    reply: AnyReply,
    target: ProxyTarget,
    path: string,
  ): Promise<void> {
    const body = Buffer.isBuffer(request.body) ? request.body : undefined
    // A long poll never comes this way (inProcessPreHandler), so none needs its reference header.
    const forwarded = engineRequestTextHeaders(request.headers, correlationOf(request))
    if (body) {
      forwarded['content-length'] = String(body.length)
      forwarded['content-type'] = bodyContentType(request)
    }
    // `host` is set by undici over HTTP, from the engine's origin.
    forwarded.host = engine.host
    const queryAt = request.url.indexOf('?')
    const url = queryAt === -1 ? path : path + request.url.slice(queryAt)
    let answered
    try {
      answered = await forwardInProcess(engineApp, {
        method: request.method,
        url,
        headers: forwarded,
        body,
        timeoutMs: target.timeoutMs,
      })
    } catch (error) {
      reply.send(failure(request, error))
      return
    }
    countAnswered(request)
    reply.headers(clientAnswerHeaders(answered.headers)).code(answered.statusCode)
    const contentType = answered.headers['content-type']
    if (streamsUntouched(answered.statusCode, contentType, target.raw)) reply.send(answered.body)
    else sendEnveloped(reply, answered.statusCode, contentType, answered.body)
  }

  /** The route table's row of the request: its route's engine path and forwarding options. */
  function targetOf(request: FastifyRequest): ProxyTarget {
    const method = request.method === 'HEAD' ? 'GET' : request.method
    const target = routeTable().get(routeKey(method, request.routeOptions.url ?? ''))
    if (!target) throw new Error(`${method} ${request.routeOptions.url} is registered as a proxy route but not in the route table`)
    return target
  }

  /** The engine path of the request: its route's, with the request's parameters filled in. */
  function enginePathOf(request: FastifyRequest, target: ProxyTarget): string {
    return target.enginePath(request.params as Record<string, string | undefined>)
  }

  /**
   * The all-in-one's preHandler of every proxy route: what the engine of this thread can take is
   * answered here, and http-proxy's handler never runs for it. That handler derives a destination
   * from the client's URL and checks it (three URL parses per request) before it calls `forward`,
   * whose engine path, like this one's, comes from the route table with the parameters encoded.
   * Everything goes in-process unless it must stream: a raw answer (file bytes), a long poll (its
   * wait ends when the client leaves) or a body still arriving. A callback hook that answers and
   * never calls `done` ends the route there, as Fastify documents for answering from a hook; an
   * async one would have to return the reply, a thenable, which costs a promise and a stream-end
   * listener per request.
   */
  function inProcessPreHandler(engineApp: InProcessEngine) {
    return (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void => {
      const target = targetOf(request)
      const readWhole = request.body === undefined || Buffer.isBuffer(request.body)
      if (target.raw || longPolls.isLongPoll(request) || !readWhole) return done()
      if (metrics) request.forwardedAt = performance.now()
      answerInProcess(engineApp, request, reply as AnyReply, target, enginePathOf(request, target)).catch((error: unknown) =>
        reply.send(error),
      )
    }
  }

  /**
   * http-proxy's handler: forwards over HTTP with the route's engine path and options. It returns
   * nothing: the reply is sent from onResponse or onError, and a returned reply (a thenable) would
   * have Fastify wait on it through a promise and a stream-end listener on every request.
   */
  function forward(request: FastifyRequest, reply: FastifyReply): void {
    const target = targetOf(request)
    if (metrics) request.forwardedAt = performance.now()
    if (longPolls.isLongPoll(request)) longPolls.watch(request, reply)
    const path = enginePathOf(request, target)
    // A body read whole goes as it came: reply-from would JSON-encode a parsed body of a JSON type.
    if (Buffer.isBuffer(request.body)) {
      reply.from(path, {
        ...target.replyOptions,
        body: request.body,
        contentType: bodyContentType(request),
      })
    } else reply.from(path, target.replyOptions)
  }

  const uploadRoutes = new Set<string>(proxyRoutes.filter((route) => route.upload).map((route) => routeKey(route.method, route.url)))
  // A scope of its own: the direct routes keep Fastify's parsers and the server's body limit.
  await fastify.register(async (scope) => {
    // Uploads may be as large as MAX_UPLOAD_BYTES allows; every other body has the server's limit.
    scope.addHook('onRoute', (route) => {
      const methods = Array.isArray(route.method) ? route.method : [route.method]
      if (methods.some((method) => uploadRoutes.has(routeKey(method, route.url)))) route.bodyLimit = uploadBodyLimit(config.maxUploadBytes)
    })
    // Bodies are streamed to the engine as they arrive, metered against the route's limit (413 fm4013).
    scope.removeAllContentTypeParsers()
    scope.addContentTypeParser('*', (request, payload, done) => {
      const body = meteredBody(request, payload)
      if (body instanceof Error) done(fail('fm4013', { cause: body }))
      // A body read whole that the client did not finish sending: nobody is left to read the answer.
      else if (body instanceof Promise)
        body.then(
          (bytes) => done(null, bytes),
          (error: Error) => done(fail('fm4000', { args: [`the body was not received whole (${error.message})`], cause: error })),
        )
      else done(null, body)
    })
    // One registration per method: each serves that method's routes with the shared pool; the
    // per-route details (engine path, timeout, raw) come from the route table.
    for (const method of new Set(proxyRoutes.map((route) => route.method))) {
      await scope.register(httpProxy, {
        upstream: engine.origin,
        undici: engineDispatcher,
        // Silences reply-from's own lines ("fetching from remote server", "response received"); Fastify's
        // request lines stay, with the client's address (docs/performance.md#what-each-request-pays-for).
        disableRequestLogging: true,
        httpMethods: [method],
        routes: proxyRoutes.filter((route) => route.method === method).map((route) => route.url),
        proxyPayloads: false,
        // The query string reaches the engine as the client sent it (reply-from takes it from the
        // request's URL), so http-proxy need not parse and rebuild it for a destination we do not use.
        preRewrite: (url: string) => {
          const queryAt = url.indexOf('?')
          return queryAt === -1 ? url : url.slice(0, queryAt)
        },
        ...(inProcess ? { preHandler: inProcessPreHandler(inProcess) } : {}),
        handler: forward,
      })
    }
  })
}

export default fp(proxyPlugin, { name: 'gateway-proxy', fastify: '5.x', dependencies: ['errors', 'correlation'] })
