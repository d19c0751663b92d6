/**
 * The `additionalheaders` request header: a URL-encoded JSON object of extra context headers that
 * flow functions' outbound calls carry. It comes from clients, so it is decoded defensively: a value
 * that is not such an object yields no headers, and headers that would change how the request is
 * framed or routed are never taken from it.
 */

/** Headers an outbound request sets itself. */
const RESERVED = new Set([
  'host',
  'connection',
  'content-length',
  'transfer-encoding',
  'keep-alive',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
])
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/

export function decodeAdditionalHeaders(raw: string | string[] | undefined): Record<string, string> {
  const text = Array.isArray(raw) ? raw[0] : raw
  if (!text) return {}
  let parsed: unknown
  try {
    parsed = JSON.parse(decodeURIComponent(text))
  } catch {
    return {}
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return {}
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(parsed)) {
    if (value === null || typeof value === 'object' || value === undefined) continue
    const text = String(value)
    const lower = name.toLowerCase()
    if (!HEADER_NAME.test(name) || RESERVED.has(lower) || !HEADER_VALUE.test(text)) continue
    headers[lower] = text
  }
  return headers
}
