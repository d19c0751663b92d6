import t from 'tap'
import { verifyWebhook, webhookSignature } from './webhooks.js'

const SECRET = 'a-secret-of-at-least-thirty-two-characters'
const BODY = '{"deliveryId":"d-1","eventType":"Created"}'
const NOW = new Date('2025-07-01T10:00:00.000Z')
const NOW_SECONDS = NOW.getTime() / 1000

function headers(overrides: Record<string, string> = {}): Record<string, string> {
  return {
    'x-workflow-event': 'Created',
    'x-workflow-delivery': 'd-1',
    'x-workflow-timestamp': String(NOW_SECONDS),
    'x-workflow-signature': webhookSignature(SECRET, NOW_SECONDS, BODY),
    ...overrides,
  }
}

t.test('a request signed with the secret over "<timestamp>.<raw body>" verifies, from Node headers or fetch Headers', async (t) => {
  t.same(verifyWebhook(SECRET, headers(), BODY, { now: () => NOW }), {
    valid: true,
    deliveryId: 'd-1',
    eventType: 'Created',
    timestamp: NOW_SECONDS,
    event: JSON.parse(BODY),
  })
  t.match(verifyWebhook(SECRET, new Headers(headers()), Buffer.from(BODY), { now: () => NOW }), { valid: true, deliveryId: 'd-1' })
  t.match(webhookSignature(SECRET, NOW_SECONDS, BODY), /^sha256=[0-9a-f]{64}$/)
})

t.test('another secret, a changed body, a moved timestamp or a malformed signature is refused', async (t) => {
  const at = { now: () => NOW }
  t.match(verifyWebhook('another-secret-of-thirty-two-characters!!', headers(), BODY, at), { valid: false, reason: /does not match/ })
  t.match(verifyWebhook(SECRET, headers(), BODY.replace('Created', 'Finished'), at), { valid: false, reason: /does not match/ })
  t.match(
    verifyWebhook(SECRET, headers({ 'x-workflow-timestamp': String(NOW_SECONDS - 1) }), BODY, at),
    { valid: false, reason: /does not match/ },
    'the timestamp is signed',
  )
  t.match(verifyWebhook(SECRET, headers({ 'x-workflow-signature': 'sha256=abc' }), BODY, at), { valid: false, reason: /does not match/ })
  t.match(verifyWebhook(SECRET, headers({ 'x-workflow-signature': 'md5=abc' }), BODY, at), { valid: false })
  t.match(verifyWebhook(SECRET, headers({ 'x-workflow-timestamp': 'yesterday' }), BODY, at), { valid: false })
})

t.test(
  "the delivery id and event type are the signed body's: a resent delivery with new headers is refused, not a new delivery",
  async (t) => {
    const at = { now: () => NOW }
    t.match(verifyWebhook(SECRET, headers({ 'x-workflow-delivery': 'd-2' }), BODY, at), {
      valid: false,
      reason: /differs from the signed body/,
    })
    t.match(verifyWebhook(SECRET, headers({ 'x-workflow-event': 'Finished' }), BODY, at), { valid: false, reason: /differs/ })
    const { 'x-workflow-delivery': _delivery, 'x-workflow-event': _event, ...signedOnly } = headers()
    t.match(
      verifyWebhook(SECRET, signedOnly, BODY, at),
      { valid: true, deliveryId: 'd-1', eventType: 'Created' },
      'the unsigned headers are optional',
    )
    const notADelivery = '{"hello":"world"}'
    const signed = { ...signedOnly, 'x-workflow-signature': webhookSignature(SECRET, NOW_SECONDS, notADelivery) }
    t.match(verifyWebhook(SECRET, signed, notADelivery, at), { valid: false, reason: /not a delivery/ })
  },
)

t.test('an old or future timestamp is refused even with a valid signature (replays), within a tolerance of 300 s by default', async (t) => {
  const later = (seconds: number) => ({ now: () => new Date(NOW.getTime() + seconds * 1000) })
  t.match(verifyWebhook(SECRET, headers(), BODY, later(300)), { valid: true })
  t.match(verifyWebhook(SECRET, headers(), BODY, later(301)), { valid: false, reason: /300 s/ })
  t.match(verifyWebhook(SECRET, headers(), BODY, later(-301)), { valid: false })
  t.match(verifyWebhook(SECRET, headers(), BODY, { ...later(3_600), toleranceSeconds: 7_200 }), { valid: true })
})
