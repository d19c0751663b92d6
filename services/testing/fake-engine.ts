/**
 * Test support for the gateway's proxy: a small engine stand-in on an ephemeral port whose routes a
 * test writes itself (JSON resources, ICustomError records, bytes, slow answers), recording every
 * request it receives. Bodies reach the handlers as raw streams, never parsed, so a test sees what
 * the gateway really sent.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { createServer, Socket } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import type { Teardown } from './harness.js'

export interface ReceivedRequest {
  method: string
  url: string
  headers: IncomingHttpHeaders
  /** The client port of the gateway's connection: equal ports mean a reused (kept-alive) connection. */
  remotePort: number | undefined
  /** Whether it came over a connection (TCP or a Unix socket); not when it was injected (an in-process engine). */
  overSocket: boolean
}

export interface FakeEngine {
  app: FastifyInstance
  url: string
  received: ReceivedRequest[]
}

/** Starts a fake engine; `define` adds its routes. Closed on teardown. */
export async function startFakeEngine(t: Teardown, define: (app: FastifyInstance) => void): Promise<FakeEngine> {
  const app = Fastify({ logger: false, keepAliveTimeout: 30_000 })
  const received: ReceivedRequest[] = []
  app.removeAllContentTypeParsers()
  app.addContentTypeParser('*', (_request, payload, done) => done(null, payload))
  app.addHook('onRequest', async (request) => {
    received.push({
      method: request.method,
      url: request.url,
      headers: request.headers,
      remotePort: request.socket.remotePort,
      overSocket: request.socket instanceof Socket,
    })
  })
  define(app)
  const url = await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  return { app, url, received }
}

/** A local URL where nothing listens: a port that was free a moment ago. */
export async function closedPortUrl(): Promise<string> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const address = server.address()
  const port = typeof address === 'object' && address ? address.port : 0
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return `http://127.0.0.1:${port}`
}

/** An ICustomError record as the engine answers it. */
export function engineError(
  statusCode: number,
  code: string,
  message: string,
  extra: { summary?: string; parameters?: Record<string, string>; stack?: string } = {},
): Record<string, unknown> {
  return { statusCode, type: statusCode >= 500 ? 'technical' : 'business', category: 'error', message, code, ...extra }
}
