/**
 * The proxy's way to an engine of the same thread (the all-in-one, docs/production.md#the-all-in-one):
 * a forwarded request is handed to the engine's Fastify instance through `inject` instead of a
 * socket, so that neither side parses, writes or reads HTTP for it, and no HTTP client stands
 * between them. The engine runs it through its own hooks, validation and handler exactly as it does
 * one from the network. The proxy decides what goes this way (routes.ts): what must stream (file
 * bytes, long polls, bodies still arriving) goes over HTTP as before.
 */

/** What the proxy needs of the engine: Fastify's `inject`, reduced to what it uses. */
export interface InjectableEngine {
  inject(request: {
    method: string
    url: string
    headers: Record<string, string | string[]>
    payload?: Buffer
  }): Promise<{ statusCode: number; headers: Record<string, string | string[] | number | undefined>; rawPayload: Buffer }>
}

export interface InjectedRequest {
  method: string
  /** The engine path with the client's query string. */
  url: string
  headers: Record<string, string | string[] | number | undefined>
  body: Buffer | undefined
  /** The route's timeout; the engine's answer after it is dropped. */
  timeoutMs: number
}

export interface InjectedAnswer {
  statusCode: number
  headers: Record<string, string | string[]>
  body: Buffer
}

/**
 * The engine did not answer within the route's timeout. It carries undici's code for the same case
 * over HTTP, so the proxy answers both alike (504 fm5040).
 */
export class InProcessTimeout extends Error {
  override readonly name = 'InProcessTimeout'
  readonly code = 'UND_ERR_HEADERS_TIMEOUT'
}

/**
 * The headers as text, as `inject` takes a request's and the proxy an answer's: without the undefined
 * ones (a cleared header), numbers as strings.
 */
function textHeaders(headers: Record<string, string | string[] | number | undefined>): Record<string, string | string[]> {
  const text: Record<string, string | string[]> = {}
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) text[name] = typeof value === 'number' ? String(value) : value
  }
  return text
}

/** The engine's answer to `request`; rejects with {@link InProcessTimeout} past its timeout, or with what `inject` rejects with. */
export function injectForwarded(engine: InjectableEngine, request: InjectedRequest): Promise<InjectedAnswer> {
  const injected = { method: request.method, url: request.url, headers: textHeaders(request.headers) }
  const answered = engine
    .inject(request.body === undefined ? injected : { ...injected, payload: request.body })
    .then((response) => ({ statusCode: response.statusCode, headers: textHeaders(response.headers), body: response.rawPayload }))
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new InProcessTimeout(`the engine did not answer within ${request.timeoutMs} ms`)), request.timeoutMs)
    timer.unref()
  })
  return Promise.race([answered, timedOut]).finally(() => clearTimeout(timer))
}
