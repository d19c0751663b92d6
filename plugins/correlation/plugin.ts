/**
 * Echoes `x-request-id` (Fastify's request id, see serverOptions' genReqId) and `traceparent` on
 * every answer, and exposes the trace context for outgoing calls (the proxy forwards it).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { formatTraceparent, type TraceContext, traceContextFrom } from './trace-context.js'

declare module 'fastify' {
  interface FastifyRequest {
    traceContext: TraceContext
  }
}

async function correlationPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorateRequest('traceContext', null as unknown as TraceContext)
  // A callback hook, not an async one: it runs on every request and has nothing to wait for, so no
  // promise needs to be made and resolved for it.
  fastify.addHook('onRequest', (request, reply, done) => {
    request.traceContext = traceContextFrom(request.headers.traceparent)
    reply.header('x-request-id', request.id)
    reply.header('traceparent', formatTraceparent(request.traceContext))
    done()
  })
}

export default fp(correlationPlugin, { name: 'correlation', fastify: '5.x' })
