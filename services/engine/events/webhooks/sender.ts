/**
 * One try of one delivery: a POST of the stored body to the subscription's URL, signed with its
 * secret, through a dispatcher whose every connection passes the destination rules (checked on the
 * address the name resolves to at this try, not only when the subscription was made). A 2xx within
 * the timeout delivers it; redirects are not followed (a 3xx is a failed try).
 */
import { type Dispatcher, errors as undiciErrors, request } from 'undici'
import { WEBHOOK_HEADERS, webhookSignature } from '../../../../lib/webhooks/signature.js'
import { OutboundRefused } from '../../../../lib/outbound/destination-guard.js'
import type { StoredWebhookDelivery, StoredWebhookSubscription } from '../../../../store/collections.js'

export type TryResult = { delivered: true; statusCode: number } | { delivered: false; statusCode?: number; error: string }

export interface SenderOptions {
  dispatcher: Dispatcher
  /** WEBHOOK_TIMEOUT_MS: the whole answer (status, headers and body) must come within it. */
  timeoutMs: number
}

/** A receiver's answer body is read and dropped; past this it is cut off (its status is what counts). */
const MAX_ANSWER_BYTES = 64 * 1024

function reasonOf(error: unknown, timeoutMs: number): string {
  if (error instanceof OutboundRefused) return `refused: ${error.message}`
  const cause = (error as { cause?: unknown }).cause
  if (cause instanceof OutboundRefused) return `refused: ${cause.message}`
  if (
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    (error as { name?: string }).name === 'TimeoutError'
  ) {
    return `no answer within WEBHOOK_TIMEOUT_MS (${timeoutMs} ms)`
  }
  const code = (error as { code?: unknown }).code ?? (cause as { code?: unknown } | undefined)?.code
  const message = error instanceof Error ? error.message : String(error)
  return typeof code === 'string' && !message.includes(code) ? `${code}: ${message}` : message
}

export class WebhookSender {
  constructor(private readonly options: SenderOptions) {}

  /** The headers of a try at `now` (the timestamp is signed along with the body). */
  headersFor(
    subscription: Pick<StoredWebhookSubscription, 'secret'>,
    delivery: Pick<StoredWebhookDelivery, '_id' | 'eventType' | 'body'>,
    now: Date,
  ): Record<string, string> {
    const timestamp = String(Math.floor(now.getTime() / 1000))
    return {
      'content-type': 'application/json',
      'user-agent': 'workflow-webhooks/1',
      [WEBHOOK_HEADERS.event]: delivery.eventType,
      [WEBHOOK_HEADERS.delivery]: delivery._id,
      [WEBHOOK_HEADERS.timestamp]: timestamp,
      [WEBHOOK_HEADERS.signature]: webhookSignature(subscription.secret, timestamp, delivery.body),
    }
  }

  async send(
    subscription: Pick<StoredWebhookSubscription, 'url' | 'secret'>,
    delivery: StoredWebhookDelivery,
    now: Date,
  ): Promise<TryResult> {
    const { timeoutMs, dispatcher } = this.options
    try {
      const answer = await request(subscription.url, {
        method: 'POST',
        dispatcher,
        headers: this.headersFor(subscription, delivery, now),
        body: delivery.body,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      })
      await answer.body.dump({ limit: MAX_ANSWER_BYTES })
      const { statusCode } = answer
      if (statusCode >= 200 && statusCode < 300) return { delivered: true, statusCode }
      return { delivered: false, statusCode, error: `the receiver answered ${statusCode}` }
    } catch (error) {
      return { delivered: false, error: reasonOf(error, timeoutMs) }
    }
  }
}
