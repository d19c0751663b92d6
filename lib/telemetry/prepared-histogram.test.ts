import t from 'tap'
import { Histogram, Registry } from 'prom-client'
import { PreparedHistogram } from './prepared-histogram.js'

const BUCKETS = [0.001, 0.01, 0.1, 1]
const LABELS = ['route', 'status'] as const
const OBSERVATIONS: Array<[string, number, number]> = [
  ['/context', 200, 0.0005],
  ['/context', 200, 0.001],
  ['/context', 200, 0.02],
  ['/context', 409, 0.5],
  ['/process/:id', 200, 3],
  ['/process/:id', 200, 0.1],
]

function pair() {
  const plainRegistry = new Registry()
  const preparedRegistry = new Registry()
  const plain = new Histogram({
    name: 'request_seconds',
    help: 'Requests.',
    buckets: BUCKETS,
    labelNames: LABELS,
    registers: [plainRegistry],
  })
  const prepared = new PreparedHistogram({
    name: 'request_seconds',
    help: 'Requests.',
    buckets: BUCKETS,
    labelNames: LABELS,
    registers: [preparedRegistry],
  })
  return { plain, prepared, plainRegistry, preparedRegistry }
}

t.test('observed through cells, the exposition is the one prom-client gives for the same observations', async (t) => {
  const { plain, prepared, plainRegistry, preparedRegistry } = pair()
  for (const [route, status, seconds] of OBSERVATIONS) {
    plain.observe({ route, status }, seconds)
    prepared.cellOf(route, status).observe(seconds)
  }
  t.equal(await preparedRegistry.metrics(), await plainRegistry.metrics())
  t.same(await prepared.get(), await plain.get(), 'get() splays the labels as prom-client does')
})

t.test("prom-client's own observe keeps working beside the cells, and reset empties both", async (t) => {
  const { plain, prepared, plainRegistry, preparedRegistry } = pair()
  plain.observe({ route: '/a', status: 200 }, 0.002)
  plain.observe({ route: '/b', status: 500 }, 0.2)
  prepared.observe({ route: '/a', status: 200 }, 0.002)
  prepared.cellOf('/b', 500).observe(0.2)
  t.equal(await preparedRegistry.metrics(), await plainRegistry.metrics())
  prepared.reset()
  plain.reset()
  t.equal(await preparedRegistry.metrics(), await plainRegistry.metrics())
  t.same((await prepared.get()).values, [])
})

t.test('a cell is found again for the same values; a wrong number of values or a value that is not a number is refused', async (t) => {
  const { prepared } = pair()
  t.equal(prepared.cellOf('/a', 200), prepared.cellOf('/a', 200))
  t.not(prepared.cellOf('/a', 200), prepared.cellOf('/a', 201))
  t.throws(() => prepared.cellOf('/a'), /has the labels route, status, given 1 values/)
  t.throws(() => prepared.cellOf('/a', 200).observe(Number.NaN), /not a valid number/)
  t.throws(() => new PreparedHistogram({ name: 'bare', help: 'No labels.', buckets: BUCKETS, labelNames: [] }), /needs labels/)
})
