/**
 * Which headers cross the proxy (DESIGN.md §4). End-to-end headers — among them the caller's `user`,
 * `lplogclientid` and `additionalheaders` — go through; hop-by-hop headers (RFC 9110 §7.6.1), and
 * every header a `connection` header names, stay on their hop. The gateway adds its correlation
 * headers: `x-request-id` (its request id) and a `traceparent` whose parent is the gateway's span.
 */
import type { IncomingHttpHeaders } from 'node:http'

type Headers = IncomingHttpHeaders

const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-connection', 'proxy-authenticate', 'proxy-authorization', 'te', 'trailer', 'transfer-encoding', 'upgrade', 'http2-settings'])

/**
 * Request headers the gateway sets or must not pass on besides the hop-by-hop ones: `host` is the
 * engine's; `expect` is answered by the gateway's own server; `accept-encoding` is left out because
 * the gateway reads JSON answers to wrap them; the correlation headers are replaced by the gateway's.
 */
const NOT_FORWARDED = new Set(['host', 'expect', 'accept-encoding', 'x-request-id', 'traceparent'])

/** Answer headers the client gets from the gateway itself: its own correlation headers. */
const NOT_RETURNED = new Set(['x-request-id', 'traceparent'])

function connectionListed(headers: Headers): Set<string> {
  const value = headers.connection
  const list = Array.isArray(value) ? value.join(',') : typeof value === 'string' ? value : ''
  return new Set(
    list
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  )
}

function filtered(headers: Headers, drop: ReadonlySet<string>): Headers {
  const listed = connectionListed(headers)
  const kept: Headers = {}
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase()
    if (value === undefined || HOP_BY_HOP.has(lower) || listed.has(lower) || drop.has(lower)) continue
    kept[lower] = value
  }
  return kept
}

export interface Correlation {
  requestId: string
  traceparent: string
}

/**
 * The headers of the request to the engine. The body is streamed as it came, so its
 * `content-length` (when the caller sent one; else it stays chunked) and `content-type` still hold.
 */
export function engineRequestHeaders(incoming: Headers, correlation: Correlation): Headers {
  const headers = filtered(incoming, NOT_FORWARDED)
  headers['x-request-id'] = correlation.requestId
  headers.traceparent = correlation.traceparent
  return headers
}

/** The engine's answer headers that the client gets. */
export function clientAnswerHeaders(fromEngine: Headers): Headers {
  return filtered(fromEngine, NOT_RETURNED)
}
