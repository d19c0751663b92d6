import t from 'tap'
import { createModelSchemaCompiler } from './validation.js'

t.test('JSON Schema patterns of models each check their own regex, however many one compiler has compiled', async (t) => {
  const compiler = createModelSchemaCompiler()
  const lowercase = compiler.compile({ type: 'string', pattern: '^[a-z]+$' })
  const code = compiler.compile({ type: 'object', properties: { code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]{3}$' } } })
  t.equal(lowercase('abc'), true)
  t.equal(lowercase('ab c'), false, 'a space is not a lowercase letter')
  t.equal(code({ code: 'LR-123' }), true)
  t.equal(code({ code: 'abc' }), false, "the second schema does not reuse the first schema's pattern")
  t.equal(code({ code: 'LR-12' }), false)
})
