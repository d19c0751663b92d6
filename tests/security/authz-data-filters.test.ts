/**
 * Finding 6 (part): data-search filters that are not a query — an operator at the top level, a
 * logical operator without its array, an unknown operator, a non-object where a condition belongs —
 * are a 400 naming the field, never a 500, and the search never runs.
 */
import t from 'tap'
import { filterProblem } from '../../services/engine/flow-host/data-filter.js'
import { startSecureStack, TENANT_A } from './authz-stack.js'

const BAD_FILTERS: Array<[string, unknown, string, string]> = [
  ['an operator at the top level', { $gt: '' }, 'body.filter.$gt', 'wm4000'],
  ['$and without an array', { $and: 1 }, 'body.filter.$and', 'wm4000'],
  ['$or with an empty array', { $or: [] }, 'body.filter.$or', 'wm4000'],
  ['a member of $or that is not an object', { $or: [{ days: 1 }, 1] }, 'body.filter.$or[1]', 'wm4000'],
  ['a member of $nor that is an array', { $nor: [[{ days: 1 }]] }, 'body.filter.$nor[0]', 'wm4000'],
  ['an unknown operator on a field', { days: { $foo: 1 } }, 'body.filter.days.$foo', 'wm3100'],
  ['an unknown operator at the top level', { $where: 'sleep(1000)' }, 'body.filter.$where', 'wm3100'],
  ['a logical operator on a field', { days: { $and: [{ $gt: 1 }] } }, 'body.filter.days.$and', 'wm3100'],
  ['$in without an array', { days: { $in: 5 } }, 'body.filter.days.$in', 'wm4000'],
  ['$nin without an array', { days: { $nin: 'x' } }, 'body.filter.days.$nin', 'wm4000'],
  ['$not without operators', { days: { $not: 5 } }, 'body.filter.days.$not', 'wm4000'],
  ['$size that is not a count', { tags: { $size: -1 } }, 'body.filter.tags.$size', 'wm4000'],
  ['$exists that is not a boolean', { days: { $exists: 'yes' } }, 'body.filter.days.$exists', 'wm4000'],
  ['$regex that is not a string', { businessKey: { $regex: 5 } }, 'body.filter.businessKey.$regex', 'wm4000'],
  ['$options without $regex', { businessKey: { $options: 'i' } }, 'body.filter.businessKey.$options', 'wm4000'],
  ['$elemMatch that is not an object', { tags: { $elemMatch: 3 } }, 'body.filter.tags.$elemMatch', 'wm4000'],
  ['operators mixed with fields', { days: { $gt: 1, plain: 2 } }, 'body.filter.days', 'wm4000'],
  ['a nested fault', { $and: [{ $or: [{ days: { $gte: 1 } }, { days: { $in: 'x' } }] }] }, 'body.filter.$and[0].$or[1].days.$in', 'wm4000'],
]

t.test('filterProblem names the first faulty field of a filter, and passes every well-formed query', async (t) => {
  for (const [what, filter, field] of BAD_FILTERS) t.equal(filterProblem(filter)?.field, field, what)
  const good = [
    {},
    { days: 3 },
    { days: { $gte: 5, $lt: 10 }, employee: { $in: ['eve'] } },
    { businessKey: { $regex: '^LR-', $options: 'i' } },
    { $or: [{ days: { $gt: 10 } }, { employee: { $ne: 'carl' } }], $nor: [{ days: 0 }] },
    { days: { $not: { $gt: 5 } } },
    { tags: { $elemMatch: { $eq: 'x' } }, items: { $elemMatch: { qty: { $gt: 1 } } } },
    { tags: { $size: 2 }, note: { $exists: false } },
    { address: { city: 'Paris' } },
  ]
  for (const filter of good) t.equal(filterProblem(filter), undefined, JSON.stringify(filter))
  let deep: Record<string, unknown> = { days: 1 }
  for (let level = 0; level < 100_000; level++) deep = { $and: [deep] }
  t.equal(filterProblem(deep), undefined, 'a very deep filter is walked without recursion')
})

t.test('bad data-search filters answer 400 naming the field through the gateway, never 500', async (t) => {
  const stack = await startSecureStack(t)
  for (const [what, filter, field, code] of BAD_FILTERS) {
    const answer = await stack.send('POST', '/external/data/search/Leave%20bookings', {
      as: stack.a.employee,
      body: { ...TENANT_A, filter },
      operationId: 'searchDataCollection',
    })
    t.equal(answer.status, 400, what)
    t.match(answer.body, { status: 'customerror', error: { code } }, what)
    t.ok(answer.body.error?.message.includes(field), `${what}: the message names ${field}: ${answer.body.error?.message}`)
  }
  const fine = await stack.send<{ total: number }>('POST', '/external/data/search/Leave%20bookings', {
    as: stack.a.employee,
    body: { ...TENANT_A, filter: { $or: [{ days: { $gt: 1 } }, { days: { $exists: false } }] } },
    operationId: 'searchDataCollection',
  })
  t.equal(fine.status, 200, 'a well-formed filter still searches')
})
