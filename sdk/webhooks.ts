/**
 * For receivers of the service's webhooks (docs/webhooks.md): `verifyWebhook` checks that a request
 * was signed with the subscription's secret, in constant time, and that its timestamp is recent, so
 * a captured request cannot be replayed later. Verify the raw body exactly as received, before
 * parsing it; then drop repeats by the `deliveryId` it answers (delivery is at least once).
 *
 *   const check = verifyWebhook(process.env.WEBHOOK_SECRET, request.headers, rawBody)
 *   if (!check.valid) return reply.code(401).send(check.reason)
 *   if (await seen(check.deliveryId)) return reply.code(200).send()
 *
 * Only the timestamp and the body are signed. So the delivery id and event type it answers are the
 * signed body's, never the `x-workflow-delivery` / `x-workflow-event` headers: a captured delivery
 * resent with a new delivery header would otherwise pass a receiver's dedupe as a new event. A
 * header that disagrees with the body is refused.
 */
import { timingSafeEqual } from 'node:crypto'
import type { components } from './generated/gateway.js'
import { SIGNATURE_PREFIX, WEBHOOK_HEADERS, webhookSignature } from './signature.js'

export { WEBHOOK_HEADERS, webhookSignature } from './signature.js'

/** The JSON body of a delivery, as signed. */
export type WebhookPayload = components['schemas']['WebhookPayload']

/** Node's incoming headers, or a fetch `Headers`. */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>> | Headers

export interface VerifyOptions {
  /** How old (or how far ahead) a timestamp may be, in seconds; 300 when not given. */
  toleranceSeconds?: number
  /** The receiver's clock (tests). */
  now?: () => Date
}

export type WebhookVerification =
  | { valid: true; deliveryId: string; eventType: WebhookPayload['eventType']; timestamp: number; event: WebhookPayload }
  | { valid: false; reason: string }

export const DEFAULT_TOLERANCE_SECONDS = 300

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Readonly<Record<string, string | string[] | undefined>>)[name]
  return Array.isArray(value) ? value[0] : value
}

/** The signed body as a delivery, or undefined when it is not one (it was signed, so the service sent no such body). */
function payloadOf(rawBody: string | Uint8Array): WebhookPayload | undefined {
  try {
    const parsed: unknown = JSON.parse(typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody))
    const { deliveryId, eventType } = (parsed ?? {}) as Partial<Record<'deliveryId' | 'eventType', unknown>>
    return typeof deliveryId === 'string' && typeof eventType === 'string' ? (parsed as WebhookPayload) : undefined
  } catch {
    return undefined
  }
}

/** Checks a webhook request's signature and timestamp against the subscription's secret. */
export function verifyWebhook(
  secret: string,
  headers: WebhookHeaders,
  rawBody: string | Uint8Array,
  options: VerifyOptions = {},
): WebhookVerification {
  const signature = header(headers, WEBHOOK_HEADERS.signature)
  const timestampText = header(headers, WEBHOOK_HEADERS.timestamp)
  if (!signature?.startsWith(SIGNATURE_PREFIX)) return { valid: false, reason: `${WEBHOOK_HEADERS.signature} is missing or not sha256=…` }
  if (timestampText === undefined || !/^\d{1,12}$/.test(timestampText))
    return { valid: false, reason: `${WEBHOOK_HEADERS.timestamp} is missing or not Unix seconds` }
  const timestamp = Number(timestampText)
  const now = Math.floor((options.now?.() ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(now - timestamp) > tolerance) return { valid: false, reason: `the timestamp is more than ${tolerance} s away from now` }
  const expected = Buffer.from(webhookSignature(secret, timestampText, rawBody))
  const given = Buffer.from(signature)
  // timingSafeEqual needs equal lengths; the length of a well-formed signature is no secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { valid: false, reason: 'the signature does not match' }
  const event = payloadOf(rawBody)
  if (!event) return { valid: false, reason: 'the signed body is not a delivery: no deliveryId and eventType' }
  const deliveryHeader = header(headers, WEBHOOK_HEADERS.delivery)
  const eventHeader = header(headers, WEBHOOK_HEADERS.event)
  if (
    (deliveryHeader !== undefined && deliveryHeader !== event.deliveryId) ||
    (eventHeader !== undefined && eventHeader !== event.eventType)
  )
    return {
      valid: false,
      reason: `${WEBHOOK_HEADERS.delivery} or ${WEBHOOK_HEADERS.event} differs from the signed body (the headers are not signed)`,
    }
  return { valid: true, deliveryId: event.deliveryId, eventType: event.eventType, timestamp, event }
}
