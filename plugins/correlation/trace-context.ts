/**
 * Request correlation: `x-request-id` (kept when sane, else generated) and the W3C `traceparent`
 * (kept when valid, else a new trace is started).
 */
import { randomBytes, randomUUID } from 'node:crypto'

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/
const ALL_ZEROS = /^0+$/

/** Keeps a caller's request id only when it is short and harmless in logs and headers. */
export function requestIdFrom(header: string | string[] | undefined): string {
  const value = Array.isArray(header) ? header[0] : header
  return value !== undefined && REQUEST_ID.test(value) ? value : randomUUID()
}

/**
 * Random bytes for trace and span ids, drawn from a pool refilled 4 KiB at a time: one
 * `randomBytes` call per id cost microseconds on every request of both services, as much as
 * the rest of the correlation work together. The ids only need to be unpredictable enough not to
 * collide (W3C Trace Context, section 3.2.2.3), and `randomUUID` pools its entropy the same way.
 */
const POOL_BYTES = 4096
let pool = Buffer.alloc(0)
let poolOffset = 0

function randomHex(bytes: number): string {
  if (poolOffset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES)
    poolOffset = 0
  }
  const hex = pool.toString('hex', poolOffset, poolOffset + bytes)
  poolOffset += bytes
  // An all-zero id is invalid (W3C Trace Context); drawing again is a 2^-64 event at most.
  return ALL_ZEROS.test(hex) ? randomHex(bytes) : hex
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
  const traceId = match && !ALL_ZEROS.test(match[1]!) && !ALL_ZEROS.test(match[2]!) ? match[1]! : randomHex(16)
  return { traceId, spanId: randomHex(8), flags: match?.[3] ?? '01' }
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.flags}`
}
