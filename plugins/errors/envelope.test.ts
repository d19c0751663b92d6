import t from 'tap'
import { envelopeStatus, errorEnvelope, successEnvelope } from './envelope.js'

t.test('HTTP status maps to the envelope status of docs/reference/http.md#envelope', async (t) => {
  t.equal(envelopeStatus(200), 'success')
  t.equal(envelopeStatus(204), 'success')
  t.equal(envelopeStatus(304), 'success')
  t.equal(envelopeStatus(401), 'permissionError')
  t.equal(envelopeStatus(403), 'permissionError')
  t.equal(envelopeStatus(400), 'customerror')
  t.equal(envelopeStatus(404), 'customerror')
  t.equal(envelopeStatus(409), 'customerror')
  t.equal(envelopeStatus(500), 'error')
  t.equal(envelopeStatus(504), 'error')
})

t.test('success wraps the data', async (t) => {
  t.same(successEnvelope({ a: 1 }), { status: 'success', data: { a: 1 } })
})

t.test('an error record becomes an envelope with message, title and code; stack only when present', async (t) => {
  const record = {
    statusCode: 404,
    type: 'business' as const,
    category: 'error' as const,
    message: 'Note not found',
    code: 'wm3090',
    summary: 'Not found',
  }
  t.same(errorEnvelope(record), {
    status: 'customerror',
    data: null,
    error: { message: 'Note not found', title: 'Not found', code: 'wm3090' },
  })
  t.same(errorEnvelope({ ...record, statusCode: 500, stack: 'Error: x\n  at y' }).data, 'Error: x\n  at y')
})
