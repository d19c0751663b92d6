/**
 * The fast path of expressions (fast-expressions.ts) gives JSONata's answer for every shape it
 * takes, and leaves to JSONata what it must (sequences, prototype keys, mixed or boolean orderings).
 */
import jsonata from 'jsonata'
import t from 'tap'
import { compileExpression, type EvaluationScope, type ExpressionStore } from './expressions.js'
import { type ExpressionNode, fastEvaluator, NOT_FAST } from './fast-expressions.js'

const CONSTANTS: Record<string, string> = { payrollOnline: 'yes', limit: '10' }

function scope(): EvaluationScope {
  return {
    constant: async (name) => CONSTANTS[name],
    uuid: () => '00000000-0000-4000-8000-000000000000',
    checkDeadline: () => undefined,
    checkResult: () => undefined,
  }
}

const STORES: ExpressionStore[] = [
  { data: { days: 3, note: 'x', ok: true, nested: { deep: { value: 7 } } }, user: { userId: 'ada' }, output: { balanceOk: false } },
  { data: { days: 12, list: [1, 2], one: [5], note: 'y' }, user: {} },
  { data: { days: '12', mixed: [{ a: 1 }, { a: 2 }] } },
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
]
const LEFT_TO_JSONATA = ['data.list', 'data.one', 'data.mixed.a', 'data.constructor', 'data.days[0]', 'data.ok > false', "data.days > '5'"]

t.test('every shape the fast path takes gets the answer JSONata gives', async (t) => {
  for (const source of [...TAKEN, ...LEFT_TO_JSONATA]) {
    const compiled = compileExpression(source, 'test')
    const reference = jsonata(source)
    for (const store of STORES) {
      const expected = await reference
        .evaluate(store, { constant: (name: string) => CONSTANTS[name], uuid: () => '' })
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
  for (const source of ["'Start on ' & input.from", '20 - input.days', '$string(data.days)', 'data.list[0]', 'data.days ~> $string()']) {
    t.equal(fastEvaluator(jsonata(source).ast() as ExpressionNode), undefined, `${source} is JSONata's`)
  }
  const arrays = fastEvaluator(jsonata('data.list').ast() as ExpressionNode)
  t.equal(arrays?.({ data: { list: [1] } }, scope()), NOT_FAST, 'a sequence on the way is left to JSONata at run time')
})
