/**
 * The webhook signature (docs/webhooks.md): `sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`
 * with the subscription's secret. It lives in the SDK, which imports nothing of the service, and the
 * engine signs with this very module (lib/webhooks/signature.ts re-exports it), so the sender and
 * `verifyWebhook` can never disagree on the format.
 */
import { createHmac } from 'node:crypto'

export const WEBHOOK_HEADERS = {
  event: 'x-workflow-event',
  delivery: 'x-workflow-delivery',
  timestamp: 'x-workflow-timestamp',
  signature: 'x-workflow-signature',
} as const

export const SIGNATURE_PREFIX = 'sha256='

/** The `x-workflow-signature` value of a body sent at `timestamp` (Unix seconds). */
export function webhookSignature(secret: string, timestamp: number | string, rawBody: string | Uint8Array): string {
  return SIGNATURE_PREFIX + createHmac('sha256', secret).update(`${timestamp}.`).update(rawBody).digest('hex')
}
