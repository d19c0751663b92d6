/**
 * The proxy's way to an engine of the same thread (the all-in-one, docs/production.md#the-all-in-one):
 * an undici dispatcher that hands a forwarded request to the engine's Fastify instance through
 * `inject` instead of a socket, so that neither side parses, writes or reads HTTP for it. The engine
 * runs the request through its own hooks, validation and handler exactly as it does one from the
 * network. What must stream goes over HTTP as before, through `overHttp`: a request body that is
 * still arriving (larger than the proxy reads whole), and a request the proxy marks with
 * {@link STREAMED_HEADER} (raw answers, file bytes, and long polls, whose wait ends when the client
 * leaves). The route's timeout holds as it does over HTTP: undici's headers timeout error, which the
 * proxy answers with 504.
 */
import type { IncomingHttpHeaders } from 'node:http'
import { Dispatcher, errors } from 'undici'

/** A forwarded request that must go over HTTP carries this header, which the dispatcher takes off. */
export const STREAMED_HEADER = 'x-workflow-streamed'

/** What the dispatcher needs of the engine: Fastify's `inject`, reduced to what it uses. */
export interface InjectableEngine {
  inject(request: {
    method: string
    url: string
    headers: Record<string, string | string[]>
    payload?: string | Buffer
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; rawPayload: Buffer }>
}

/** undici's older handler form, which its `request` API (reply-from's) dispatches with. */
interface RequestHandler {
  onConnect(abort: (reason?: Error) => void): void
  onHeaders(statusCode: number, rawHeaders: string[], resume: () => void, statusText: string): boolean
  onData(chunk: Buffer): boolean
  onComplete(trailers: string[]): void
  onError(error: Error): void
}

function isRequestHandler(handler: Dispatcher.DispatchHandler): handler is Dispatcher.DispatchHandler & RequestHandler {
  const candidate = handler as Partial<RequestHandler>
  return typeof candidate.onConnect === 'function' && typeof candidate.onHeaders === 'function'
}

/** A body the dispatcher can hand over whole: none, or bytes the proxy read before forwarding. */
function wholeBody(body: Dispatcher.DispatchOptions['body']): body is string | Buffer | null | undefined {
  return body === undefined || body === null || typeof body === 'string' || Buffer.isBuffer(body)
}

/** The request's headers without the undefined ones (reply-from clears `connection` that way) and without the mark. */
function injectedHeaders(headers: Dispatcher.DispatchOptions['headers']): Record<string, string | string[]> {
  const kept: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries((headers ?? {}) as IncomingHttpHeaders)) {
    if (value !== undefined && name !== STREAMED_HEADER) kept[name] = value
  }
  return kept
}

/** The answer's headers as the flat name, value list undici's handlers take. */
function rawHeadersOf(headers: Record<string, string | string[] | number | undefined>): string[] {
  const raw: string[] = []
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue
    if (Array.isArray(value)) for (const item of value) raw.push(name, item)
    else raw.push(name, String(value))
  }
  return raw
}

export class InProcessEngine extends Dispatcher {
  constructor(
    private readonly engine: InjectableEngine,
    private readonly overHttp: Dispatcher,
  ) {
    super()
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const headers = options.headers as IncomingHttpHeaders | undefined
    if (!wholeBody(options.body) || headers?.[STREAMED_HEADER] !== undefined || !isRequestHandler(handler)) {
      return this.overHttp.dispatch({ ...options, headers: injectedHeaders(options.headers) }, handler)
    }
    this.answer(options, handler, options.body)
    return true
  }

  private answer(options: Dispatcher.DispatchOptions, handler: RequestHandler, body: string | Buffer | null | undefined): void {
    let settled = false
    let timer: NodeJS.Timeout | undefined
    const fail = (error: Error): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      handler.onError(error)
    }
    handler.onConnect((reason) => fail(reason ?? new errors.RequestAbortedError()))
    if (settled) return
    const timeoutMs = options.headersTimeout
    if (timeoutMs) timer = setTimeout(() => fail(new errors.HeadersTimeoutError()), timeoutMs).unref()
    const request = { method: options.method, url: options.path, headers: injectedHeaders(options.headers) }
    this.engine.inject(body === undefined || body === null ? request : { ...request, payload: body }).then(
      (response) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        handler.onHeaders(response.statusCode, rawHeadersOf(response.headers), () => {}, '')
        if (response.rawPayload.length > 0) handler.onData(response.rawPayload)
        handler.onComplete([])
      },
      (error: unknown) => fail(error instanceof Error ? error : new Error(String(error))),
    )
  }

  override close(): Promise<void> {
    return this.overHttp.close()
  }

  override destroy(): Promise<void> {
    return this.overHttp.destroy()
  }
}
