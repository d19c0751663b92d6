/**
 * Request correlation: `x-request-id` (kept when sane, else generated) and the W3C `traceparent`
 * (kept when valid, else a new trace is started).
 */
import { randomBytes, randomUUID } from 'node:crypto'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/

/** Keeps a caller's request id only when it is short and harmless in logs and headers. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header
  return value !== undefined && REQUEST_ID.test(value) ? value : randomUUID()
}

export interface TraceContext {
  traceId: string
  /** The span id of this hop, used as parent id when calling further. */
  spanId: string
  flags: string
}

/** Continues the caller's trace with a new span of our own, or starts a new sampled trace. */
export function traceContextFrom(header: string | string[] | undefined): TraceContext {
  const value = Array.isArray(header) ? header[0] : header
  const match = value === undefined ? null : TRACEPARENT.exec(value.trim().toLowerCase())
  const traceId = match && !/^0+$/.test(match[1]!) && !/^0+$/.test(match[2]!) ? match[1]! : randomBytes(16).toString('hex')
  return { traceId, spanId: randomBytes(8).toString('hex'), flags: match?.[3] ?? '01' }
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`
}
