import t from 'tap'
import { envelopeJsonOfEngineAnswer, envelopeOfEngineAnswer, InvalidEngineAnswer } from './answer.js'
import { clientAnswerHeaders, engineRequestHeaders } from './headers.js'

const JSON_TYPE = 'application/json; charset=utf-8'

t.test('the framed envelope text is the same JSON value as the envelope object', async (t) => {
  const bodies = ['{"tasks":[{"taskId":"t-1"}],"processStatus":"running"}', ' [1, 2, {"a": "é\\u00e9"}]\n', '"text"', '0', '', '  ']
  for (const body of bodies) {
    t.same(JSON.parse(envelopeJsonOfEngineAnswer(200, JSON_TYPE, body, false)), envelopeOfEngineAnswer(200, JSON_TYPE, body, false), JSON.stringify(body))
  }
  const record = JSON.stringify({ statusCode: 409, type: 'business', category: 'error', message: 'locked', code: 'wm3040', stack: 'at x' })
  t.same(JSON.parse(envelopeJsonOfEngineAnswer(409, JSON_TYPE, record, false)), { status: 'customerror', data: null, error: { message: 'locked', code: 'wm3040' } })
})

t.test('a success that is not JSON is still refused (502 fm5021), not framed', async (t) => {
  for (const body of ['{"status": "OK"', 'not json', '{"a":1}garbage']) t.throws(() => envelopeJsonOfEngineAnswer(200, JSON_TYPE, body, false), InvalidEngineAnswer, body)
})

t.test('hop-by-hop headers stay on their hop whether or not a connection header lists more', async (t) => {
  const correlation = { requestId: 'r-1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }
  t.same(engineRequestHeaders({ connection: 'Keep-Alive', 'keep-alive': 'timeout=5', user: 'u-1', host: 'gw' }, correlation), { user: 'u-1', 'x-request-id': 'r-1', traceparent: correlation.traceparent })
  t.same(engineRequestHeaders({ connection: 'keep-alive, X-Hop', 'x-hop': 'secret', user: 'u-1' }, correlation), { user: 'u-1', 'x-request-id': 'r-1', traceparent: correlation.traceparent })
  t.same(clientAnswerHeaders({ connection: 'close', 'content-type': JSON_TYPE, 'x-note': 'a\u0001b', 'set-cookie': ['a=1', 'b=\u00002'] }), { 'content-type': JSON_TYPE, 'x-note': 'ab', 'set-cookie': ['a=1', 'b=2'] }, 'control characters are removed from answer header values')
})
