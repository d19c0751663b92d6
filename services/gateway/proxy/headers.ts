/**
 * Which headers cross the proxy (docs/reference/gateway.md#the-proxy). End-to-end headers — among them the caller's `user`,
 * `authorization` (the bearer token the engine verifies itself in AUTH_MODE=jwt), `lplogclientid`
 * and `additionalheaders` — go through; hop-by-hop headers (RFC 9110, section 7.6.1), and
 * every header a `connection` header names, stay on their hop. The gateway adds its correlation
 * headers: `x-request-id` (its request id) and a `traceparent` whose parent is the gateway's span.
 */
import type { IncomingHttpHeaders } from 'node:http'

type Headers = IncomingHttpHeaders

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'http2-settings',
])

/**
 * Request headers the gateway sets or must not pass on besides the hop-by-hop ones: `host` is the
 * engine's; `expect` is answered by the gateway's own server; `accept-encoding` is left out because
 * the gateway reads JSON answers to wrap them; the correlation headers are replaced by the gateway's.
 */
const NOT_FORWARDED = new Set(['host', 'expect', 'accept-encoding', 'x-request-id', 'traceparent'])

/** Answer headers the client gets from the gateway itself: its own correlation headers. */
const NOT_RETURNED = new Set(['x-request-id', 'traceparent'])

/** The header names a `connection` header lists (they stay on this hop too); none without one. */
function connectionListed(headers: Headers): ReadonlySet<string> | undefined {
  const value = headers.connection
  if (value === undefined) return undefined
  const list = Array.isArray(value) ? value.join(',') : value
  // Nearly every request and answer says just `keep-alive` (or `close`): hop-by-hop anyway, nothing to parse.
  const lower = list.toLowerCase()
  if (lower === 'keep-alive' || lower === 'close') return undefined
  return new Set(
    list
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter(Boolean),
  )
}

/** Control characters are not valid in a header value (RFC 9110, section 5.5); Fastify would fail to send one. */
const INVALID_VALUE_CHARACTER = /[^\t\x20-\x7E\x80-\xFF]/
const INVALID_VALUE_CHARACTERS = new RegExp(INVALID_VALUE_CHARACTER.source, 'g')

/** Tested first: a valid value (all of them, in practice) is kept without a copy. */
function sanitisedValue(value: string): string {
  return INVALID_VALUE_CHARACTER.test(value) ? value.replace(INVALID_VALUE_CHARACTERS, '') : value
}

function sanitised(value: string | string[]): string | string[] {
  return typeof value === 'string' ? sanitisedValue(value) : value.map(sanitisedValue)
}

/** Whether a header stays on its hop or is the gateway's own to set; names come lowercased from the HTTP parsers. */
function isDropped(name: string, drop: ReadonlySet<string>, listed: ReadonlySet<string> | undefined): boolean {
  return HOP_BY_HOP.has(name) || drop.has(name) || listed?.has(name) === true
}

export interface Correlation {
  requestId: string
  traceparent: string
}

/**
 * The headers of the request to the engine. The body is streamed as it came, so its
 * `content-length` (when the caller sent one; else it stays chunked) and `content-type` still hold.
 * `headers` is reply-from's own copy of the request's, made for this rewrite: the dropped ones are
 * set undefined in place, which undici leaves out, rather than the rest copied into another object.
 */
export function engineRequestHeaders(headers: Headers, correlation: Correlation): Headers {
  const listed = connectionListed(headers)
  for (const name in headers) if (isDropped(name, NOT_FORWARDED, listed)) headers[name] = undefined
  headers['x-request-id'] = correlation.requestId
  headers.traceparent = correlation.traceparent
  return headers
}

/**
 * {@link engineRequestHeaders} as a new object of text values, for a request handed to the engine
 * in-process (in-process-engine.ts): one pass over the client's headers copies what crosses, where
 * the HTTP path's copy, cleared in place, would need a second pass to drop the cleared ones.
 */
export function engineRequestTextHeaders(headers: Headers, correlation: Correlation): Record<string, string | string[]> {
  const listed = connectionListed(headers)
  const forwarded: Record<string, string | string[]> = {}
  for (const name in headers) {
    const value = headers[name]
    if (value !== undefined && !isDropped(name, NOT_FORWARDED, listed)) forwarded[name] = value
  }
  forwarded['x-request-id'] = correlation.requestId
  forwarded.traceparent = correlation.traceparent
  return forwarded
}

/** The engine's answer headers that the client gets, values cleared of characters no header may hold. */
export function clientAnswerHeaders(fromEngine: Headers): Headers {
  const listed = connectionListed(fromEngine)
  const kept: Headers = {}
  for (const name in fromEngine) {
    const value = fromEngine[name]
    if (value !== undefined && !isDropped(name, NOT_RETURNED, listed)) kept[name] = sanitised(value)
  }
  return kept
}
