/**
 * Ordered index entries: the encoding orders values as MongoDB does within a type, the sorted set
 * behaves as a sorted array, and a plan on an equality prefix plus a range reads only (a superset
 * of) the matches, multikey fields included.
 */
import { Query } from 'mingo'
import t from 'tap'
import type { Document, Filter } from '../port.js'
import { orderedKey, SortedKeys } from './ordered-keys.js'
import { candidates } from './query-plan.js'
import { SecondaryIndex } from './secondary-index.js'

t.test('encodings order numbers, strings and dates as the values are ordered', async (t) => {
  const numbers = [-Infinity, -1e300, -2.5, -1, -0.001, 0, 1e-9, 1, 2, 10, 123456789.5, 1e300, Infinity]
  for (let i = 1; i < numbers.length; i++) t.ok(orderedKey(numbers[i - 1]) < orderedKey(numbers[i]), `${numbers[i - 1]} < ${numbers[i]}`)
  t.equal(orderedKey(-0), orderedKey(0), '-0 and 0 are one key')
  const strings = ['', '\u0000', '\u0000a', 'a', 'a\u0000', 'a\u0000b', 'ab', 'b']
  for (let i = 1; i < strings.length; i++)
    t.ok(orderedKey(strings[i - 1]) < orderedKey(strings[i]), JSON.stringify(strings.slice(i - 1, i + 1)))
  t.ok(orderedKey(new Date(1)) < orderedKey(new Date(2)))
  t.not(orderedKey(new Date(1)), orderedKey(1), 'a Date is not its time')
})

t.test('the sorted set keeps order through inserts and deletes across chunks', async (t) => {
  const set = new SortedKeys()
  const reference = new Set<string>()
  let seed = 7
  const random = (): number => (seed = (seed * 48271) % 2147483647) / 2147483647
  for (let i = 0; i < 6000; i++) {
    const key = String(Math.floor(random() * 4000)).padStart(5, '0')
    if (random() < 0.3) {
      set.delete(key)
      reference.delete(key)
    } else {
      set.insert(key)
      reference.add(key)
    }
  }
  const sorted = [...reference].sort()
  t.same([...set.range('', '\uffff')], sorted)
  t.equal(set.size, sorted.length)
  t.same(
    [...set.range('01000', '02000')],
    sorted.filter((key) => key >= '01000' && key < '02000'),
  )
})

t.test('a plan on an equality prefix and a range reads only the matches', async (t) => {
  const index = new SecondaryIndex('c', { name: 'p_a_u', keys: { p: 1, a: 1, u: -1 }, unique: false })
  const docs = new Map<string, Document>()
  for (let i = 0; i < 2000; i++) {
    const doc: Document = { _id: `d${i}`, p: i % 2 === 0 ? 'leave' : 'travel', a: 'hr', u: new Date(Date.UTC(2024, 0, 1) + i * 60_000) }
    docs.set(`s:d${i}`, doc)
    index.insert(`s:d${i}`, index.entryOf(doc))
  }
  const from = new Date(Date.UTC(2024, 0, 1) + 100 * 60_000)
  const to = new Date(Date.UTC(2024, 0, 1) + 199 * 60_000)
  const filters: Filter[] = [
    { p: 'leave', a: 'hr', u: { $gte: from, $lte: to } },
    { p: 'leave', a: 'hr', u: { $gt: from } },
    { p: 'leave', a: 'hr', u: { $lt: from } },
    { p: { $in: ['leave', 'travel'] }, a: 'hr', u: { $gte: from, $lt: to } },
    { p: 'leave', a: { $in: ['hr', 'sales'] }, u: { $gte: from, $lte: to } },
    { p: 'leave', a: 'hr' },
    { p: 'leave', u: { $gte: from } },
    { a: 'hr', p: 'travel', u: { $gte: 'x' } },
  ]
  for (const filter of filters) {
    const planned = [...candidates(filter, { docs, indexes: [index] })]
    const expected = [...docs.values()].filter((doc) => new Query(filter, {}).test(doc))
    const matched = planned.filter((doc) => new Query(filter, {}).test(doc))
    t.same(new Set(matched.map((doc) => doc._id)), new Set(expected.map((doc) => doc._id)), `every match found: ${JSON.stringify(filter)}`)
    if (!('u' in filter) || Object.keys(filter).length === 3)
      t.equal(planned.length, expected.length, `nothing else read: ${JSON.stringify(filter)}`)
  }
})

t.test('a range on a multikey field still finds documents whose elements meet the bounds apart', async (t) => {
  const index = new SecondaryIndex('c', { name: 'k_v', keys: { k: 1, v: 1 }, unique: false })
  const docs = new Map<string, Document>()
  const all: Document[] = [
    { _id: 'a', k: 'x', v: [1, 10] },
    { _id: 'b', k: 'x', v: 5 },
    { _id: 'c', k: 'x', v: [20] },
    { _id: 'd', k: 'y', v: 5 },
  ]
  for (const doc of all) {
    docs.set(`s:${doc._id as string}`, doc)
    index.insert(`s:${doc._id as string}`, index.entryOf(doc))
  }
  const filter = { k: 'x', v: { $gt: 4, $lt: 6 } }
  const found = [...candidates(filter, { docs, indexes: [index] })].filter((doc) => new Query(filter, {}).test(doc))
  t.same(found.map((doc) => doc._id).sort(), ['a', 'b'])
})

t.test(
  'on a multikey field, an upper bound alone or an $elemMatch of two bounds reads only the documents with an element within them',
  async (t) => {
    const index = new SecondaryIndex('c', { name: 'due', keys: { due: 1 }, unique: false })
    const docs = new Map<string, Document>()
    const day = (n: number) => new Date(Date.UTC(2026, 2, n))
    const all: Document[] = [
      { _id: 'early', due: [day(1), day(20)] },
      { _id: 'middle', due: [day(10)] },
      { _id: 'late', due: [day(25), day(28)] },
      { _id: 'none', due: [] },
      { _id: 'single', due: day(12) },
    ]
    for (const doc of all) {
      docs.set(`s:${doc._id as string}`, doc)
      index.insert(`s:${doc._id as string}`, index.entryOf(doc))
    }
    // [filter, its matches, the documents read: those with a value within the bounds, a plain one too, as $elemMatch leaves to the filter]
    const cases: Array<[Filter, string[], string[]]> = [
      [{ due: { $lte: day(11) } }, ['early', 'middle'], ['early', 'middle']],
      [{ due: { $elemMatch: { $gt: day(5), $lte: day(15) } } }, ['middle'], ['middle', 'single']],
      [{ due: { $elemMatch: { $gte: day(20), $lt: day(26) } } }, ['early', 'late'], ['early', 'late']],
    ]
    for (const [filter, matches, read] of cases) {
      const planned = [...candidates(filter, { docs, indexes: [index] })]
      const matched = [...docs.values()].filter((doc) => new Query(filter, {}).test(doc)).map((doc) => doc._id)
      t.same(matched.sort(), matches, `mingo agrees: ${JSON.stringify(filter)}`)
      t.same(planned.map((doc) => doc._id).sort(), read, `only those read: ${JSON.stringify(filter)}`)
    }
  },
)

t.test('a partial index on the existence of a field plans the queries that pin that field to values, and no other', async (t) => {
  const index = new SecondaryIndex('c', {
    name: 'scheduleKey',
    keys: { scheduleKey: 1 },
    unique: true,
    partialFilterExpression: { scheduleKey: { $exists: true } },
  })
  const docs = new Map<string, Document>()
  for (let i = 0; i < 1000; i++) {
    const doc: Document = { _id: `j${i}`, status: 'waiting', ...(i % 2 === 0 ? { scheduleKey: `timer:${i}` } : {}) }
    docs.set(`s:j${i}`, doc)
    const entry = index.entryOf(doc)
    if (entry) index.insert(`s:j${i}`, entry)
  }
  const read = (filter: Filter) => {
    const planned = [...candidates(filter, { docs, indexes: [index] })]
    return { planned: planned.length, matched: planned.filter((doc) => new Query(filter, {}).test(doc)).length }
  }
  t.same(read({ scheduleKey: 'timer:10', status: 'waiting' }), { planned: 1, matched: 1 }, 'one key: one document read')
  t.same(read({ scheduleKey: { $in: ['timer:10', 'timer:12', 'timer:11'] } }), { planned: 2, matched: 2 })
  t.same(read({ scheduleKey: null }), { planned: 1000, matched: 500 }, 'null matches the documents the index leaves out: every one read')
  t.same(read({ scheduleKey: { $in: ['timer:10', null] } }), { planned: 1000, matched: 501 })
  const other = new SecondaryIndex('c', {
    name: 'waitingKey',
    keys: { scheduleKey: 1 },
    unique: false,
    partialFilterExpression: { status: 'waiting' },
  })
  t.equal(other.usableFor(new Map([['scheduleKey', ['timer:10']]])), false, 'a partial filter of another kind is never used')
})

t.test('two documents with the same values in every indexed field need no index change, whatever else differs', async (t) => {
  const index = new SecondaryIndex('c', {
    name: 'tenant_viewers_started',
    keys: { appId: 1, viewers: 1, 'meta.startedAt': -1 },
    unique: false,
  })
  const base: Document = { _id: 'a', appId: 'hr', viewers: ['user:u1', 'swimlane:hr'], meta: { startedAt: new Date(5) }, other: 1 }
  const alike: Array<[string, Document]> = [
    ['another unindexed field', { ...base, other: 2 }],
    ['an equal date in a new object', { ...base, meta: { startedAt: new Date(5) } }],
    ['an equal array in a new array', { ...base, viewers: ['user:u1', 'swimlane:hr'] }],
  ]
  for (const [what, after] of alike) {
    t.ok(index.sameFieldValues(base, after), what)
    t.ok(SecondaryIndex.sameEntry(index.entryOf(base), index.entryOf(after)), `${what}: the entries agree`)
  }
  const changed: Array<[string, Document]> = [
    ['a changed value', { ...base, appId: 'finance' }],
    ['a later date', { ...base, meta: { startedAt: new Date(6) } }],
    ['an added element', { ...base, viewers: ['user:u1', 'swimlane:hr', 'user:u2'] }],
    ['elements in another order', { ...base, viewers: ['swimlane:hr', 'user:u1'] }],
    ['a number for a string', { ...base, appId: 7 }],
    ['objects in the array', { ...base, viewers: [{ user: 'u1' }] }],
    ['an array on the way', { ...base, meta: [{ startedAt: new Date(5) }] }],
  ]
  for (const [what, after] of changed) t.notOk(index.sameFieldValues(base, after), what)
  t.ok(index.sameFieldValues({ _id: 'a' }, { _id: 'a', appId: null }), 'missing and null are one value in an index')
  const partial = new SecondaryIndex('c', { name: 'p', keys: { appId: 1 }, unique: false, partialFilterExpression: { other: 1 } })
  t.notOk(partial.sameFieldValues(base, { ...base, other: 2 }), 'a partial index depends on more than its fields: always computed')
})
