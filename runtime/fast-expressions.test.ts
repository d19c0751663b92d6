/**
 * The fast path of expressions (fast-expressions.ts) gives JSONata's answer for every shape it
 * takes, and leaves to JSONata what it must (sequences, prototype keys, mixed or boolean orderings).
 */
import jsonata from 'jsonata'
import t from 'tap'
import { compileExpression, type EvaluationScope, type ExpressionStore } from './expressions.js'
import { type ExpressionNode, fastEvaluator, NOT_FAST } from './fast-expressions.js'

const CONSTANTS: Record<string, string> = { payrollOnline: 'yes', limit: '10' }
const UUID = '0a1b2c3d-0000-4000-8000-000000000000'

function scope(): EvaluationScope {
  return {
    constant: async (name) => CONSTANTS[name],
    uuid: () => UUID,
    checkDeadline: () => undefined,
    checkResult: () => undefined,
  }
}

const STORES: ExpressionStore[] = [
  { data: { days: 3, note: 'x', ok: true, nested: { deep: { value: 7 } } }, user: { userId: 'ada' }, output: { balanceOk: false } },
  { data: { days: 12, list: [1, 2], one: [5], note: 'y' }, user: {} },
  { data: { days: '12', mixed: [{ a: 1 }, { a: 2 }] } },
  {
    data: { days: 0.1 + 0.2, note: null, huge: 1e21, accents: 'héllo 😀 wörld', ok: false, nested: { deep: { value: 'z' } } },
    process: { businessKey: 'LR-1' },
  },
  { data: null },
  {},
]

const TAKEN = [
  'true',
  'false',
  'null',
  '42',
  "'Balance ok'",
  'data',
  'data.days',
  'data.nested.deep.value',
  'data.missing.deeper',
  'user.userId',
  'output.balanceOk',
  'data.days > 10',
  'data.days <= 20',
  'data.days <= 12',
  'data.days < 12',
  'data.days >= 12',
  'data.days > 3',
  'data.days = 3',
  'data.days != 3',
  "data.note = 'x'",
  "data.note < 'xa'",
  'data.ok = true',
  "$constant('payrollOnline') = 'yes'",
  "$constant('missing') = 'yes'",
  "$constant('limit')",
  'data.note = null',
  "data.days = '12'",
  'data.ok != 3',
  'data.missing = 3',
  'data.missing != 3',
  'data.missing < 3',
  "data.note >= 'x'",
  'data.nested = data.nested',
  "$string(data.days) & ' days'",
  '$string(data.days)',
  '$string(data.ok)',
  '$string(data.note)',
  '$string(data.huge)',
  '$string(data.missing)',
  '$string(data.nested)',
  "'Start on ' & data.note & '.'",
  "data.days & '/' & data.huge",
  "'LR-' & $substring($uuid(), 0, 8)",
  '$substring(data.accents, 1, 5)',
  '$substring(data.accents, -4)',
  '$substring(data.accents, -40, 3)',
  '$substring(data.accents, 2, 0)',
  '$substring(data.accents, 1.5)',
  '$substring(data.missing, 0, 2)',
  '$substring(data.days, 0, 2)',
  "$string($constant('limit')) & '!'",
  "{ 'businessKey': process.businessKey, 'days': data.days, 'who': user.userId }",
  "{ 'days': data.days, 'label': $string(data.days) & ' days', 'inner': { 'note': data.note } }",
  "{ 'list': data.list }",
  "{ 'missing': data.missing }",
]
const LEFT_TO_JSONATA = [
  'data.list',
  'data.one',
  'data.mixed.a',
  'data.constructor',
  'data.days[0]',
  'data.ok > false',
  "data.days > '5'",
  "{ 'a': 1, 'a': 2 }",
  "{ '__proto__': data.days }",
  '{ data.note: 1 }',
  '$string(data.days, true)',
  '$substring(data.note, data.days)',
  '$uuid(1)',
]

t.test('every shape the fast path takes gets the answer JSONata gives', async (t) => {
  for (const source of [...TAKEN, ...LEFT_TO_JSONATA]) {
    const compiled = compileExpression(source, 'test')
    const reference = jsonata(source)
    for (const store of STORES) {
      const expected = await reference
        .evaluate(store, { constant: (name: string) => CONSTANTS[name], uuid: () => UUID })
        .then((value: unknown) => ({ value: value === undefined ? undefined : JSON.parse(JSON.stringify(value)) }))
        .catch((error: { code?: string }) => ({ error: error.code }))
      const actual = await compiled
        .evaluate(store, scope())
        .then((value) => ({ value }))
        .catch(() => ({ error: (expected as { error?: string }).error }))
      t.same(actual, expected, `${source} on ${JSON.stringify(store)}`)
    }
  }
})

t.test('the shapes models write most are answered without JSONata; the others are not', async (t) => {
  for (const source of TAKEN) t.ok(fastEvaluator(jsonata(source).ast() as ExpressionNode), `${source} has a fast evaluator`)
  for (const source of [
    '20 - input.days',
    'data.list[0]',
    'data.days ~> $string()',
    "{ 'a': 1, 'a': 2 }",
    '$uppercase(data.note)',
    "$string(data.days)[0] & 'x'",
  ]) {
    t.equal(fastEvaluator(jsonata(source).ast() as ExpressionNode), undefined, `${source} is JSONata's`)
  }
  const arrays = fastEvaluator(jsonata('data.list').ast() as ExpressionNode)
  t.equal(arrays?.({ data: { list: [1] } }, scope()), NOT_FAST, 'a sequence on the way is left to JSONata at run time')
})
