/**
 * The fast paths must agree with mingo (the reference the rest of the embedded store uses) on every
 * shape they accept, and hand everything else back.
 */
import { Query, update as mingoUpdate } from 'mingo'
import t, { type Test } from 'tap'
import type { Document, Filter, UpdateFilter } from '../port.js'
import { simpleFilterMatcher, simpleProjector, simpleUpdate } from './fast-paths.js'

const when = new Date('2024-01-01T00:00:00Z')
const DOCS: Document[] = [
  { _id: 'a', version: 3, status: 'waiting', flag: true, when, nested: { k: 1, deep: { v: 'x' } } },
  { _id: 'b', version: 4, status: ['waiting', 'running'], flag: false, when: [when], nested: [{ k: 1 }, { k: 2 }] },
  { _id: 'c', version: '3', status: null, nested: { k: [1, 2] }, list: [[3]], obj: { '0': 'zero' } },
  { _id: 'd', list: [3, 4], when: new Date(when.getTime() + 1), nested: { deep: [{ v: 'x' }] } },
  {},
]
/** Filters are also tried on these: a range on a Date compares times, and must agree with mingo on an invalid Date and on other types. */
const FILTERED_DOCS: Document[] = [
  ...DOCS,
  { _id: 'e', when: new Date(Number.NaN) },
  { _id: 'f', when: when.toISOString() },
  { _id: 'g', when: [new Date(when.getTime() - 1), new Date(when.getTime() + 2)] },
]

/** What a fast path makes of a shape it must take; a shape handed back to mingo fails the test. */
function taken<Shape, Fast>(t: Test, fastPath: (shape: Shape) => Fast | undefined, shape: Shape): Fast | undefined {
  const fast = fastPath(shape)
  if (!fast) t.fail(`${JSON.stringify(shape)} should be simple`)
  return fast
}

const FILTERS: Filter[] = [
  { _id: 'a' },
  { _id: 'a', version: 3 },
  { version: 3 },
  { version: '3' },
  { status: 'waiting' },
  { status: 'running' },
  { flag: true },
  { flag: false },
  { when },
  { 'nested.k': 1 },
  { 'nested.k': 2 },
  { 'nested.deep.v': 'x' },
  { 'list.0': 3 },
  { list: 3 },
  { 'obj.0': 'zero' },
  { 'nested.0.k': 1 },
  { missing: 'x' },
  {},
  { version: { $eq: 3 } },
  { version: { $gt: 3 } },
  { version: { $gte: 3 } },
  { version: { $lt: 4 } },
  { version: { $lte: 3, $gte: 3 } },
  { version: { $gt: '2' } },
  { status: { $in: ['running', 'x'] } },
  { status: { $in: [] } },
  { status: { $nin: ['running', 'x'] } },
  { status: { $nin: [] } },
  { missing: { $nin: ['x'] } },
  { list: { $nin: [3] } },
  { when: { $nin: [when] } },
  { 'nested.k': { $nin: [2, 5] } },
  { 'nested.deep.v': { $nin: ['y'] } },
  { status: { $gte: 'running' } },
  { when: { $gt: when } },
  { when: { $gte: when, $lt: new Date(when.getTime() + 1) } },
  { when: { $lte: when } },
  { when: { $lt: new Date(when.getTime() + 1) } },
  { when: { $gt: new Date(0) } },
  { 'nested.k': { $gt: 1 } },
  { 'nested.k': { $in: [2, 5] } },
  { list: { $gt: 3 } },
  { list: { $gte: 3, $lt: 4 } },
  { flag: { $lt: true } },
  { missing: { $lt: 1 } },
  { $or: [{ version: 3 }, { status: 'running' }] },
  { $or: [{ _id: 'a' }, { when: { $lte: when } }], version: { $gte: 3 } },
  { $and: [{ version: { $gte: 3 } }, { $or: [{ flag: true }, { list: 4 }] }] },
]

t.test('simple filters match exactly as mingo does', async (t) => {
  for (const filter of FILTERS) {
    const matcher = taken(t, simpleFilterMatcher, filter)
    if (!matcher) continue
    const query = new Query(filter, {})
    for (const doc of FILTERED_DOCS) t.equal(matcher(doc), query.test(doc), `${JSON.stringify(filter)} on ${JSON.stringify(doc)}`)
  }
})

t.test('anything else is left to mingo', async (t) => {
  for (const filter of [
    { a: null },
    { a: { $gt: null } },
    { a: { $in: [null] } },
    { a: { $nin: [null] } },
    { a: { $nin: 'x' } },
    { a: { $ne: 1 } },
    { a: { $gt: 1, $exists: true } },
    { a: /x/ },
    { a: [1] },
    { a: { b: 1 } },
    { a: {} },
    { $or: [] },
    { $or: [{ a: null }] },
    { $nor: [{ a: 1 }] },
    { 'a.$b': 1 },
    { a: Number.NaN },
    { a: { $lt: new Date(Number.NaN) } },
  ]) {
    t.equal(simpleFilterMatcher(filter), undefined, JSON.stringify(filter))
  }
})

const UPDATES: Array<[Document, UpdateFilter]> = [
  [
    { version: 3, s: 'a' },
    { $set: { s: 'b' }, $inc: { version: 1 } },
  ],
  [{ s: 'a' }, { $set: { s: 'a' } }],
  [{ s: 'a' }, { $set: { 'p.q.r': when } }],
  [{ p: { q: 1, z: [1] } }, { $set: { 'p.q': { deep: [1, { x: 2 }] } } }],
  [{ p: { q: 1 } }, { $set: { p: { q: 1 } } }],
  [{ n: 1 }, { $inc: { n: 0 } }],
  [{ n: 1 }, { $inc: { m: 0 } }],
  [{ n: 1.5 }, { $inc: { n: -2, 'x.y': 3 } }],
  [{ a: 1, p: { q: 1 } }, { $unset: { a: '', 'p.q': '', missing: '', 'p.missing': '', 'none.x': '' } }],
  [{ when }, { $set: { when: new Date(when.getTime()) } }],
]

t.test('simple updates give the same document and the same "modified" as mingo', async (t) => {
  for (const [doc, update] of UPDATES) {
    const original = structuredClone(doc)
    const result = taken(t, (simple: UpdateFilter) => simpleUpdate(doc, simple), update)
    if (!result) continue
    t.same(doc, original, 'the input is left as it is')
    const reference = structuredClone(doc)
    const referenceChanged = mingoUpdate(reference, update)
    t.same(result.after, reference, `${JSON.stringify(update)} on ${JSON.stringify(doc)}`)
    t.equal(result.changed.length > 0, referenceChanged.length > 0, `${JSON.stringify(update)} modified?`)
  }
})

t.test('only the objects along updated paths are copied', async (t) => {
  const doc: Document = { a: { b: { c: 1 } }, untouched: { big: [1, 2, 3] } }
  const result = simpleUpdate(doc, { $set: { 'a.b.c': 2 } })
  t.equal(result?.after.untouched, doc.untouched, 'shared')
  t.not(result?.after.a, doc.a, 'copied')
  t.same(doc, { a: { b: { c: 1 } }, untouched: { big: [1, 2, 3] } })
})

t.test('updates the fast path does not take are left to mingo', async (t) => {
  const cases: UpdateFilter[] = [
    { $push: { list: 1 } },
    { $inc: { a: 1 } },
    { $inc: { n: '1' } },
    { $set: { 'arr.0.b': 2 } },
    { $set: { 'a.b': 1 } },
    { $set: { obj: 1, 'obj.b': 2 } },
    { $set: { n: 2 }, $inc: { n: 1 } },
    { $set: { 'arr.$': 2 } },
    { $set: { n: 2 }, $currentDate: { b: true } },
  ]
  const doc: Document = { a: 'text', n: 1, arr: [{ b: 1 }], obj: { b: 1 } }
  for (const update of cases) t.equal(simpleUpdate(doc, update), undefined, JSON.stringify(update))
})

const PROJECTIONS: Array<Record<string, 0 | 1 | boolean>> = [
  { _id: 0 },
  { version: 0, nested: 0 },
  { version: 1 },
  { _id: 0, status: 1, when: 1 },
  { when: 1, _id: 1, missing: 1 },
  { flag: true, version: true },
  { _id: 0, 'nested.k': 1, status: 1 },
  { 'nested.deep.v': 1, 'nested.k': 1, version: 1 },
  { 'obj.0': 1, 'missing.x': 1 },
  { _id: 0, 'tasks.taskId': 1, 'tasks.status': 1, status: 1 },
  { 'tasks.status': 1, 'nested.k': 1, 'tasks.taskId': 1 },
  { 'list.x': 1 },
  { version: 1, flag: 1, 'nested.k': 1, 'nested.deep': 1 },
]
/** Arrays of documents on a projected path: each element keeps what the paths select, as mingo keeps it. */
const ARRAY_DOCS: Document[] = [
  { _id: 't1', status: 'running', tasks: [{ taskId: 'x', status: 'open', form: { big: [1] } }, { status: 'done' }, {}] },
  { _id: 't2', tasks: [[{ taskId: 'y', extra: 1 }], [], { taskId: 'z' }], nested: [{ k: { deep: 1 } }, { j: 2 }] },
  { _id: 't3', tasks: [], nested: [] },
  { _id: 't4', tasks: { taskId: 'one', status: 'open', other: 1 } },
]

t.test('simple projections project exactly as mingo does, field order included', async (t) => {
  for (const projection of PROJECTIONS) {
    const projector = taken(t, simpleProjector, projection)
    if (!projector) continue
    for (const doc of [...DOCS, ...ARRAY_DOCS]) {
      const expected = new Query({}, {}).find<Document>([doc], projection).all()[0]
      // A scalar, null or Date on a dotted path is handed back to mingo.
      if (projector(doc) === undefined) continue
      t.same(projector(doc), expected, `${JSON.stringify(projection)} on ${JSON.stringify(doc)}`)
      t.equal(JSON.stringify(projector(doc)), JSON.stringify(expected), 'same field order')
    }
  }
})

t.test('a projection through arrays of documents is applied without mingo', async (t) => {
  const projector = simpleProjector({ _id: 0, 'tasks.taskId': 1, 'tasks.status': 1 })
  for (const doc of ARRAY_DOCS) t.not(projector?.(doc), undefined, JSON.stringify(doc))
  const [running] = ARRAY_DOCS
  t.same(projector?.(running as Document), { tasks: [{ taskId: 'x', status: 'open' }, { status: 'done' }, {}] })
  // A scalar among the elements, or on the way, leaves the document to mingo.
  t.equal(projector?.({ tasks: [{ taskId: 'x' }, 3] }), undefined)
  t.equal(projector?.({ tasks: null }), undefined)
})

t.test('other projections are left to mingo', async (t) => {
  for (const projection of [{ 'nested.k': 0 }, { a: 1, 'a.b': 1 }, { a: 1, b: 0 }, { $a: 1 }, { '_id.k': 1 }] as Array<
    Record<string, 0 | 1>
  >) {
    t.equal(simpleProjector(projection), undefined, JSON.stringify(projection))
  }
})
