import t from 'tap'
import { deepCopy } from './deep-copy.js'

t.test('copies plain objects, arrays and Dates all the way down, sharing nothing', async (t) => {
  const original = { a: 1, s: 'x', n: null, list: [{ at: new Date(5) }, [2, 3]], nested: { deeper: { flag: true } } }
  const copy = deepCopy(original)
  t.same(copy, original)
  t.not(copy.list, original.list)
  t.not(copy.list[0], original.list[0])
  t.not((copy.list[0] as { at: Date }).at, (original.list[0] as { at: Date }).at, 'Dates are new objects')
  t.ok((copy.list[0] as { at: Date }).at instanceof Date)
  t.not(copy.nested.deeper, original.nested.deeper)
})

t.test('a __proto__ field stays a field and sets no prototype', async (t) => {
  const original = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}') as Record<string, unknown>
  const copy = deepCopy(original)
  t.equal(Object.getPrototypeOf(copy), Object.prototype)
  t.equal((copy as { polluted?: unknown }).polluted, undefined)
  t.same(Object.getOwnPropertyDescriptor(copy, '__proto__')?.value, { polluted: true })
})

t.test('objects without a prototype keep having none', async (t) => {
  const original = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
  t.equal(Object.getPrototypeOf(deepCopy(original)), null)
})

t.test('what is not plain data is copied as structuredClone copies it', async (t) => {
  const map = new Map([[1, { two: 2 }]])
  const copy = deepCopy({ map })
  t.ok(copy.map instanceof Map)
  t.not(copy.map, map)
  t.same([...copy.map], [...map])
})
