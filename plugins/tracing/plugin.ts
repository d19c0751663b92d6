/**
 * A server span per request, named by the route template (`POST /process/start`), child of the
 * caller's `traceparent`. The request's trace context becomes the span's, so the echoed
 * `traceparent`, the gateway's call to the engine and the request's log lines (`trace_id`,
 * `span_id`) all name it. Without tracing configured only the (null) decorator is added: none of this runs.
 */
import type { Context, Span } from '@opentelemetry/api'
import { SpanStatusCode } from '@opentelemetry/api'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { runWithSpan, spanIds, type Tracing } from '../../lib/telemetry/tracing.js'
import { formatTraceparent } from '../correlation/trace-context.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The service's tracing; null when OTEL_EXPORTER_OTLP_ENDPOINT is unset. */
    tracing: Tracing | null
  }
}

export interface TracingPluginOptions {
  tracing: Tracing | undefined
}

interface RequestSpan {
  span: Span
  parent: Context
}

async function tracingPlugin(fastify: FastifyInstance, options: TracingPluginOptions): Promise<void> {
  const { tracing } = options
  fastify.decorate('tracing', tracing ?? null)
  if (!tracing) return
  const spans = new WeakMap<FastifyRequest, RequestSpan>()
  fastify.addHook('onClose', async () => {
    await tracing.shutdown()
  })
  fastify.addHook('onRequest', (request, reply, done) => {
    const route = request.routeOptions.url
    const parent = tracing.extract(request.headers)
    const span = tracing.startServerSpan(route === undefined ? request.method : `${request.method} ${route}`, parent, {
      'http.request.method': request.method,
      ...(route === undefined ? {} : { 'http.route': route }),
    })
    spans.set(request, { span, parent })
    request.traceContext = spanIds(span)
    reply.header('traceparent', formatTraceparent(request.traceContext))
    // Every line logged from here on (the reply's "request completed" too) names the span; the
    // "incoming request" line comes before any hook and carries the request id only.
    request.log = request.log.child({ trace_id: request.traceContext.traceId, span_id: request.traceContext.spanId })
    reply.log = request.log
    runWithSpan(span, parent, done)
  })
  // The body is read from the socket's events, outside the context entered above: enter it again
  // for the handler, whose awaited calls (store, engine, outbound http) then find it.
  fastify.addHook('preHandler', (request, _reply, done) => {
    const current = spans.get(request)
    if (current) runWithSpan(current.span, current.parent, done)
    else done()
  })
  fastify.addHook('onResponse', (request, reply, done) => {
    const current = spans.get(request)
    if (current) {
      current.span.setAttribute('http.response.status_code', reply.statusCode)
      if (reply.statusCode >= 500) current.span.setStatus({ code: SpanStatusCode.ERROR })
      current.span.end()
    }
    done()
  })
}

export default fp(tracingPlugin, { name: 'tracing', fastify: '5.x', dependencies: ['correlation'] })
