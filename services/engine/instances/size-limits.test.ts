import t from 'tap'
import { sampleState } from '../../testing/instances.js'
import { type InstanceLimits, limitBreach } from './size-limits.js'

const roomy = { noteMaxBytes: 1_000_000, notesMaxPerInstance: 1_000 }

/** The stored JSON's size of a state whose data holds `text`, for limits set around it. */
function stateWith(text: string) {
  const state = sampleState({}, { text })
  const bytes = Buffer.byteLength(JSON.stringify({ processInstance: state.processInstance, dataInstance: state.dataInstance }), 'utf8')
  return { state, bytes }
}

t.test('INSTANCE_MAX_BYTES counts UTF-8 bytes: a state of three-byte characters is refused one byte past the limit', async (t) => {
  // 1,000 characters of three bytes each: their UTF-16 length alone is a third of their size.
  const { state, bytes } = stateWith('€'.repeat(1_000))
  const atLimit: InstanceLimits = { ...roomy, instanceMaxBytes: bytes }
  const oneByteUnder: InstanceLimits = { ...roomy, instanceMaxBytes: bytes - 1 }
  t.equal(limitBreach(atLimit, undefined, state), null, 'exactly at the limit is allowed')
  t.match(limitBreach(oneByteUnder, undefined, state), {
    code: 'wm3045',
    args: [state.processInstance.processInstanceId, String(bytes), String(bytes - 1)],
  })
})

t.test('an ASCII state is refused one byte past the limit, and allowed at it or under it', async (t) => {
  const { state, bytes } = stateWith('x'.repeat(1_000))
  t.match(limitBreach({ ...roomy, instanceMaxBytes: bytes - 1 }, undefined, state), { code: 'wm3045', args: [String, String(bytes)] })
  t.equal(limitBreach({ ...roomy, instanceMaxBytes: bytes }, undefined, state), null)
  t.equal(limitBreach({ ...roomy, instanceMaxBytes: bytes * 3 }, undefined, state), null)
})

t.test('an instance already over the limit may change as long as it does not grow', async (t) => {
  const before = stateWith('€'.repeat(1_000))
  const smaller = stateWith('€'.repeat(999))
  const larger = stateWith('€'.repeat(1_001))
  const limits: InstanceLimits = { ...roomy, instanceMaxBytes: smaller.bytes - 1 }
  t.equal(limitBreach(limits, before.state, smaller.state), null, 'shrinking past nothing is allowed')
  t.match(limitBreach(limits, before.state, larger.state), { code: 'wm3045', args: [String, String(larger.bytes)] })
})

t.test('the limit holds for states whose JSON is larger than their text: escaped control characters, Dates, numbers', async (t) => {
  // Each control character takes six bytes as JSON (\u0001), twice what a three-byte character takes.
  for (const [label, text] of [
    ['control characters', '\u0001'.repeat(1_000)],
    ['quotes and backslashes', '"\\'.repeat(500)],
  ] as const) {
    const { state, bytes } = stateWith(text)
    t.match(limitBreach({ ...roomy, instanceMaxBytes: bytes - 1 }, undefined, state), { code: 'wm3045' }, `${label}: one byte past`)
    t.equal(limitBreach({ ...roomy, instanceMaxBytes: bytes }, undefined, state), null, `${label}: at the limit`)
  }
  const dated = sampleState(
    {},
    {
      at: Array.from({ length: 1_000 }, (_, n) => new Date(n)),
      amounts: Array.from({ length: 50 }, (_, n) => -(n + 1) / 3e300),
    },
  )
  const bytes = Buffer.byteLength(JSON.stringify({ processInstance: dated.processInstance, dataInstance: dated.dataInstance }), 'utf8')
  t.match(
    limitBreach({ ...roomy, instanceMaxBytes: bytes - 1 }, undefined, dated),
    { code: 'wm3045' },
    'Dates and long numbers: one byte past',
  )
  t.equal(limitBreach({ ...roomy, instanceMaxBytes: bytes }, undefined, dated), null, 'Dates and long numbers: at the limit')
})
