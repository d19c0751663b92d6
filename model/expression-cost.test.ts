import t from 'tap'
import { costlyConstruct, MAX_INLINE_ITEMS, MAX_INLINE_STRING_LENGTH, oversizedResult } from './expression-cost.js'
import { parseExpression } from './expression-syntax.js'

t.test('constructs whose one step can be unboundedly slow are named; plain paths and arithmetic are not', async (t) => {
  const named: Array<[string, string]> = [
    ['( $f := function($n) { $f($n) }; $f(1) )', 'a function definition'],
    ['$count([1..10])', 'a range [a..b]'],
    ['input.items^(price)', 'the sort operator ^(…)'],
    ['$sort(input.items)', '$sort'],
    ["$pad('', 10)", '$pad'],
    ['$distinct(input.items)', '$distinct'],
    ['$reduce(input.items, $append)', '$reduce'],
    ["$eval('1')", '$eval'],
    ['( $s := $sort; $s(input.items) )', '$sort'],
  ]
  for (const [source, construct] of named) t.equal(costlyConstruct(parseExpression(source).ast()), construct, source)
  for (const source of ['data.days > 10', "'LR-' & $substring($uuid(), 0, 8)", '$sum(input.items.price) * 1.2', '$match(input.s, /a+/)']) {
    t.equal(costlyConstruct(parseExpression(source).ast()), undefined, source)
  }
})

t.test('values over the engine-thread caps are named by size', async (t) => {
  t.equal(oversizedResult('a'.repeat(MAX_INLINE_STRING_LENGTH)), undefined)
  t.equal(oversizedResult('a'.repeat(MAX_INLINE_STRING_LENGTH + 1)), `a string of ${MAX_INLINE_STRING_LENGTH + 1} characters`)
  t.equal(oversizedResult(new Array(MAX_INLINE_ITEMS + 1).fill(0)), `an array of ${MAX_INLINE_ITEMS + 1} items`)
})
