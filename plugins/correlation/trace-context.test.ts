import t from 'tap'
import { formatTraceparent, requestIdFrom, traceContextFrom } from './trace-context.js'

t.test('a sane caller request id is kept, anything else is replaced by a UUID', async (t) => {
  t.equal(requestIdFrom('abc-123'), 'abc-123')
  t.equal(requestIdFrom(['first', 'second']), 'first')
  const uuid = /^[0-9a-f-]{36}$/
  t.match(requestIdFrom(undefined), uuid)
  t.match(requestIdFrom('has spaces\nand newline'), uuid)
  t.match(requestIdFrom('x'.repeat(129)), uuid)
})

t.test('a valid traceparent keeps its trace id and gets a new span id', async (t) => {
  const incoming = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01'
  const context = traceContextFrom(incoming)
  t.equal(context.traceId, '4bf92f3577b34da6a3ce929d0e0e4736')
  t.not(context.spanId, '00f067aa0ba902b7')
  t.match(formatTraceparent(context), /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/)
})

t.test('a missing or invalid traceparent starts a new sampled trace', async (t) => {
  for (const header of [undefined, 'garbage', '00-00000000000000000000000000000000-00f067aa0ba902b7-01']) {
    const context = traceContextFrom(header)
    t.match(formatTraceparent(context), /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/)
    t.not(context.traceId, '00000000000000000000000000000000')
  }
})

t.test('span ids drawn from the pooled random bytes do not repeat, across refills too', async (t) => {
  const spans = new Set<string>()
  for (let index = 0; index < 2000; index++) spans.add(traceContextFrom(undefined).spanId)
  t.equal(spans.size, 2000)
})
