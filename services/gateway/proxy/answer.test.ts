import t from 'tap'
import { envelopeBytesOfEngineAnswer, envelopeOfEngineAnswer, InvalidEngineAnswer } from './answer.js'
import { clientAnswerHeaders, engineRequestHeaders } from './headers.js'

const JSON_TYPE = 'application/json; charset=utf-8'

function framed(statusCode: number, body: string): unknown {
  return JSON.parse(envelopeBytesOfEngineAnswer(statusCode, JSON_TYPE, Buffer.from(body), false).toString('utf8'))
}

/** The headers an object really carries: undici leaves out a header set to undefined. */
function defined(headers: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(headers).filter(([, value]) => value !== undefined))
}

t.test('the framed envelope bytes are the same JSON value as the envelope object', async (t) => {
  const bodies = [
    '{"tasks":[{"taskId":"t-1"}],"processStatus":"running"}',
    ' [1, 2, {"a": "é\\u00e9"}]\n',
    '\t{}\r\n',
    '[]',
    '"text"',
    '0',
    'null',
    '',
    '  ',
  ]
  for (const body of bodies) t.same(framed(200, body), envelopeOfEngineAnswer(200, JSON_TYPE, body, false), JSON.stringify(body))
  const record = JSON.stringify({ statusCode: 409, type: 'business', category: 'error', message: 'locked', code: 'wm3040', stack: 'at x' })
  t.same(framed(409, record), { status: 'customerror', data: null, error: { message: 'locked', code: 'wm3040' } })
})

t.test('a success that is not JSON is still refused (502 fm5021), not framed', async (t) => {
  const bodies = ['{"status": "OK"', 'not json', '{"a":1}garbage', '<html>{}</html>', '{', ' [ ', '"unterminated', '0x10']
  for (const body of bodies)
    t.throws(() => envelopeBytesOfEngineAnswer(200, JSON_TYPE, Buffer.from(body), false), InvalidEngineAnswer, body)
})

t.test('hop-by-hop headers stay on their hop whether or not a connection header lists more', async (t) => {
  const correlation = { requestId: 'r-1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' }
  t.same(defined(engineRequestHeaders({ connection: 'Keep-Alive', 'keep-alive': 'timeout=5', user: 'u-1', host: 'gw' }, correlation)), {
    user: 'u-1',
    'x-request-id': 'r-1',
    traceparent: correlation.traceparent,
  })
  t.same(
    defined(
      engineRequestHeaders(
        { connection: 'keep-alive, X-Hop', 'x-hop': 'secret', user: 'u-1', 'x-request-id': 'client', traceparent: 'client' },
        correlation,
      ),
    ),
    { user: 'u-1', 'x-request-id': 'r-1', traceparent: correlation.traceparent },
  )
  t.same(
    clientAnswerHeaders({ connection: 'close', 'content-type': JSON_TYPE, 'x-note': 'a\u0001b', 'set-cookie': ['a=1', 'b=\u00002'] }),
    { 'content-type': JSON_TYPE, 'x-note': 'ab', 'set-cookie': ['a=1', 'b=2'] },
    'control characters are removed from answer header values',
  )
})
