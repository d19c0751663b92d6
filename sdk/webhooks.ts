/**
 * For receivers of the service's webhooks (docs/webhooks.md): `verifyWebhook` checks that a request
 * was signed with the subscription's secret, in constant time, and that its timestamp is recent, so
 * a captured request cannot be replayed later. Verify the raw body exactly as received, before
 * parsing it; then drop repeats by `x-workflow-delivery` (delivery is at least once).
 *
 *   const check = verifyWebhook(process.env.WEBHOOK_SECRET, request.headers, rawBody)
 *   if (!check.valid) return reply.code(401).send(check.reason)
 *   if (await seen(check.deliveryId)) return reply.code(200).send()
 */
import { timingSafeEqual } from 'node:crypto'
import { SIGNATURE_PREFIX, WEBHOOK_HEADERS, webhookSignature } from '../lib/webhooks/signature.js'

export { WEBHOOK_HEADERS, webhookSignature } from '../lib/webhooks/signature.js'

/** Node's incoming headers, or a fetch `Headers`. */
export type WebhookHeaders = Readonly<Record<string, string | string[] | undefined>> | Headers

export interface VerifyOptions {
  /** How old (or how far ahead) a timestamp may be, in seconds; 300 when not given. */
  toleranceSeconds?: number
  /** The receiver's clock (tests). */
  now?: () => Date
}

export type WebhookVerification =
  { valid: true; deliveryId: string; eventType: string; timestamp: number } | { valid: false; reason: string }

export const DEFAULT_TOLERANCE_SECONDS = 300

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Readonly<Record<string, string | string[] | undefined>>)[name]
  return Array.isArray(value) ? value[0] : value
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
  const deliveryId = header(headers, WEBHOOK_HEADERS.delivery)
  const eventType = header(headers, WEBHOOK_HEADERS.event)
  if (!signature?.startsWith(SIGNATURE_PREFIX)) return { valid: false, reason: `${WEBHOOK_HEADERS.signature} is missing or not sha256=…` }
  if (timestampText === undefined || !/^\d{1,12}$/.test(timestampText))
    return { valid: false, reason: `${WEBHOOK_HEADERS.timestamp} is missing or not Unix seconds` }
  if (!deliveryId || !eventType) return { valid: false, reason: `${WEBHOOK_HEADERS.delivery} and ${WEBHOOK_HEADERS.event} are required` }
  const timestamp = Number(timestampText)
  const now = Math.floor((options.now?.() ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS
  if (Math.abs(now - timestamp) > tolerance) return { valid: false, reason: `the timestamp is more than ${tolerance} s away from now` }
  const expected = Buffer.from(webhookSignature(secret, timestampText, rawBody))
  const given = Buffer.from(signature)
  // timingSafeEqual needs equal lengths; the length of a well-formed signature is no secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { valid: false, reason: 'the signature does not match' }
  return { valid: true, deliveryId, eventType, timestamp }
}
