import t from 'tap'
import { withFields } from './with-fields.js'

t.test('gives what a spread of both gives: the same fields in the same order, the second object winning', async (t) => {
  const base = { a: 1, b: { nested: true }, c: 'kept' }
  const extra = { b: 2, d: [4] }
  const result = withFields(base, extra)
  t.same(result, { ...base, ...extra })
  t.same(Object.keys(result), Object.keys({ ...base, ...extra }))
  t.equal(result.d, extra.d, 'values are shared, as with a spread')
  t.same(base, { a: 1, b: { nested: true }, c: 'kept' }, 'neither object changes')
  t.equal(Object.getPrototypeOf(result), Object.prototype)
})

t.test('an own __proto__ field stays a field and sets no prototype', async (t) => {
  const base = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>
  const result = withFields(base, { b: 2 })
  t.equal(Object.getPrototypeOf(result), Object.prototype)
  t.equal((result as { polluted?: unknown }).polluted, undefined)
  t.same(Object.keys(result), ['__proto__', 'a', 'b'])
  const fromExtra = withFields({ a: 1 }, JSON.parse('{"__proto__": {"polluted": true}}') as object)
  t.equal(Object.getPrototypeOf(fromExtra), Object.prototype)
  t.ok(Object.hasOwn(fromExtra, '__proto__'))
})

t.test('copies symbol fields and leaves out what is not enumerable, as a spread does', async (t) => {
  const marker = Symbol('marker')
  const base = Object.defineProperty({ [marker]: 'symbol', a: 1 }, 'hidden', { value: 1, enumerable: false })
  const result = withFields(base, { b: 2 })
  t.equal(result[marker], 'symbol')
  t.notOk(Object.hasOwn(result, 'hidden'))
})
