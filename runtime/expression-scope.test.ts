import t from 'tap'
import { compileExpression } from './expressions.js'
import { expressionScope } from './interpreter.js'
import { fakeEnvironment, fakeHost, user } from './test-support.js'

t.test('a model expression producing a value over the caps fails before a builtin works on it', async (t) => {
  const env = fakeEnvironment(user('ada'), fakeHost())
  const header = compileExpression('$length($join(input.words, " "))', 'inform[0].header')
  const words = Array.from({ length: 20_000 }, () => 'word')
  await t.rejects(header.evaluate({ input: { words } }, expressionScope(env)), {
    kind: 'technical',
    message: /produced an array of 20000 items, more than an expression of a model may/,
  })
  t.equal(await header.evaluate({ input: { words: words.slice(0, 100) } }, expressionScope(env)), 499)
})
