/**
 * The proxy's way to an engine of the same thread (the all-in-one, docs/production.md#the-all-in-one):
 * a forwarded request is handed to the engine's Fastify router (`routing`, what its HTTP server calls)
 * with a request and response of this process (in-process-exchange.ts) instead of a socket, so that
 * neither side parses, writes or reads HTTP for it, and no HTTP client stands between them. The
 * engine runs it through its own hooks, validation and handler exactly as it does one from the
 * network. The proxy decides what goes this way (routes.ts): what must stream (file bytes, long
 * polls, bodies still arriving) goes over HTTP as before.
 */
import type { IncomingMessage, ServerResponse } from 'node:http'
import { type CollectedAnswer, InProcessRequest, InProcessResponse, type TextHeaders } from './in-process-exchange.js'

/** What the proxy needs of the engine: Fastify's router, as its HTTP server calls it. */
export interface InProcessEngine {
  routing(request: IncomingMessage, response: ServerResponse): void
}

export interface ForwardedRequest {
  method: string
  /** The engine path with the client's query string. */
  url: string
  /** As they arrive over HTTP: text values only, none undefined. */
  headers: TextHeaders
  body: Buffer | undefined
  /** The route's timeout; the engine's answer after it is dropped. */
  timeoutMs: number
}

/**
 * The engine did not answer within the route's timeout. It carries undici's code for the same case
 * over HTTP, so the proxy answers both alike (504 fm5040).
 */
export class InProcessTimeout extends Error {
  override readonly name = 'InProcessTimeout'
  readonly code = 'UND_ERR_HEADERS_TIMEOUT'
}

/** The engine's answer to `request`; rejects with {@link InProcessTimeout} past its timeout, or with what failed the routing. */
export function forwardInProcess(engine: InProcessEngine, request: ForwardedRequest): Promise<CollectedAnswer> {
  return new Promise<CollectedAnswer>((resolve, reject) => {
    const timer = setTimeout(
      () => settle(new InProcessTimeout(`the engine did not answer within ${request.timeoutMs} ms`)),
      request.timeoutMs,
    )
    timer.unref()
    function settle(error: Error | null, answer?: CollectedAnswer): void {
      clearTimeout(timer)
      if (error) reject(error)
      else resolve(answer as CollectedAnswer)
    }
    const response = new InProcessResponse(request.method, settle)
    try {
      engine.routing(
        new InProcessRequest(request.method, request.url, request.headers, request.body) as unknown as IncomingMessage,
        response as unknown as ServerResponse,
      )
    } catch (error) {
      settle(error instanceof Error ? error : new Error(String(error)))
    }
  })
}
