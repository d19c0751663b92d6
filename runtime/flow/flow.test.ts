import t from 'tap'
import { runStandaloneFunction } from '../compile.js'
import { fakeEnvironment, fakeHost, refusal, user } from '../test-support.js'
import type { FlowFunctionDefinition, JsonObject, RunLimits } from '../types.js'
import { compileFunction, FunctionCompiler, type CompiledFunction } from './compile.js'
import { executeFunction } from './execute.js'

const actor = user('ada', ['ops'], 'Ada Admin')

async function run(
  definition: FlowFunctionDefinition,
  input: JsonObject = {},
  options: {
    host?: ReturnType<typeof fakeHost>
    limits?: Partial<RunLimits>
    data?: JsonObject
    library?: Record<string, FlowFunctionDefinition>
  } = {},
) {
  const host = options.host ?? fakeHost({ constants: { greeting: 'hello' }, ...(options.library ? { appFunctions: options.library } : {}) })
  const env = fakeEnvironment(actor, host, options.limits)
  const compiled = compileFunction('subject', definition)
  const compiler = new FunctionCompiler()
  const resolve = (functionId: string): CompiledFunction | undefined => {
    const definitionOf = host.appFunction(functionId)
    return definitionOf ? compiler.compile(functionId, definitionOf) : undefined
  }
  return executeFunction(compiled, { input, ...(options.data ? { data: options.data } : {}) }, env, resolve)
}

t.test('set assigns dotted paths into data, output and vars, each assignment seeing the ones before', async (t) => {
  const result = await run(
    {
      steps: [
        { set: { 'vars.base': 'input.n * 2', 'output.total.value': 'vars.base + 1', 'data.seen': 'true', 'data.who': 'user.fullName' } },
      ],
    },
    { n: 4 },
    { data: { kept: 1 } },
  )
  t.same(result.output, { total: { value: 9 } })
  t.same(result.dataInstance, { kept: 1, seen: true, who: 'Ada Admin' })
})

t.test('set refuses paths outside data/output/vars and prototype keys when the function compiles', async (t) => {
  for (const path of ['process.processStatus', 'data.__proto__.polluted', 'vars.constructor.prototype.x', 'user.roles']) {
    t.match(
      await refusal(Promise.resolve().then(() => compileFunction('bad', { steps: [{ set: { [path]: '1' } }] }))),
      { kind: 'validation' },
      path,
    )
  }
})

t.test('values read from JSON with a __proto__ key stay plain data and pollute nothing', async (t) => {
  const input = JSON.parse('{"payload": {"__proto__": {"polluted": true}}}') as JsonObject
  const result = await run({ steps: [{ set: { 'data.copy': 'input.payload', output: 'input.payload' } }] }, input)
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')
  t.equal(Object.getPrototypeOf(result.dataInstance.copy), Object.prototype)
  t.same(Object.keys(result.output), ['__proto__'], 'kept as an own key')
})

t.test('expressions cannot reach constructors, globals or the process', async (t) => {
  const probes = {
    'output.viaConstructor': '$type(input.constructor)',
    'output.viaLookup': "$type($lookup(input, 'constructor'))",
    'output.viaEval': "$type($eval('$process'))",
    'output.viaString': "$type('x'.constructor)",
    'output.globalThis': '$type($globalThis)',
    'output.require': '$type($require)',
  }
  const result = await run({ steps: [{ set: probes }] }, { a: 1 })
  t.same(result.output, {}, 'every probe is undefined, so nothing was assigned')
  const call = await refusal(
    run({ steps: [{ set: { 'output.x': "$lookup($lookup(input, 'constructor'), 'constructor')('return process')()" } }] }, {}),
  )
  t.equal(call.kind, 'technical', 'calling what is not a function fails the run')
})

t.test('if runs then or else', async (t) => {
  const definition: FlowFunctionDefinition = {
    steps: [{ if: 'input.n > 1', then: [{ set: { 'output.branch': "'then'" } }], else: [{ set: { 'output.branch': "'else'" } }] }],
  }
  t.same((await run(definition, { n: 2 })).output, { branch: 'then' })
  t.same((await run(definition, { n: 0 })).output, { branch: 'else' })
})

t.test('http sends method, url, headers and body through the host and stores the answer under as', async (t) => {
  const host = fakeHost({ http: async () => ({ status: 201, headers: { 'x-id': '7' }, body: { id: 7 } }) })
  const result = await run(
    {
      steps: [
        {
          http: {
            method: 'post',
            url: "'https://api.example/orders/' & input.id",
            headers: "{ 'X-Trace': 'abc' }",
            body: '{ "qty": input.qty }',
            timeoutMs: 500,
          },
          as: 'output.response',
        },
      ],
    },
    { id: 'o1', qty: 3 },
    { host },
  )
  t.same(host.httpRequests, [
    {
      method: 'POST',
      url: 'https://api.example/orders/o1',
      headers: { 'x-trace': 'abc' },
      body: { qty: 3 },
      timeoutMs: 500,
      idempotencyKey: host.httpRequests[0]?.idempotencyKey,
    },
  ])
  t.match(host.httpRequests[0]?.idempotencyKey, /^[\w-]{32}$/, 'every call carries an idempotency key')
  t.same(result.output, { response: { status: 201, headers: { 'x-id': '7' }, body: { id: 7 } } })
})

t.test('an outbound call still pending at the time limit fails the run on time', async (t) => {
  // An answer that never comes: only the time limit can end the run.
  const host = fakeHost({ http: () => new Promise<never>(() => undefined) })
  const error = await refusal(
    run({ steps: [{ http: { method: 'GET', url: "'https://slow.example'" } }] }, {}, { host, limits: { timeoutMs: 50 } }),
  )
  t.equal(error.kind, 'technical')
  t.match(error.message, /longer than 50 ms/, 'the time limit ended it, without the answer')
})

t.test('an expression that computes for too long is stopped by the time limit', async (t) => {
  const error = await refusal(
    run({ steps: [{ set: { 'output.sum': '$sum([1..2000].($sum([1..1000])))' } }] }, {}, { limits: { timeoutMs: 30 } }),
  )
  t.equal(error.kind, 'technical')
  t.match(error.message, /longer than 30 ms/)
})

t.test('the step limit counts every node run, nested ones included', async (t) => {
  const definition: FlowFunctionDefinition = {
    steps: [{ set: { 'vars.a': '1' } }, { if: 'true', then: [{ set: { 'vars.b': '2' } }, { set: { 'vars.c': '3' } }] }],
  }
  t.same((await run(definition, {}, { limits: { maxSteps: 4 } })).output, {})
  t.match(await refusal(run(definition, {}, { limits: { maxSteps: 3 } })), { kind: 'technical', message: /more than 3 steps/ })
})

t.test('call runs a library function with its own validated input and shares the data', async (t) => {
  const library: Record<string, FlowFunctionDefinition> = {
    double: {
      input: { type: 'object', required: ['n'], properties: { n: { type: 'number' } } },
      output: { type: 'object', required: ['doubled'] },
      steps: [{ set: { 'output.doubled': 'input.n * 2', 'data.touched': 'true' } }],
    },
    recurse: { steps: [{ call: 'recurse' }] },
  }
  const result = await run({ steps: [{ call: 'double', input: '{ "n": input.x }', as: 'output.result' }] }, { x: 21 }, { library })
  t.same(result.output, { result: { doubled: 42 } })
  t.same(result.dataInstance, { touched: true })
  t.match(await refusal(run({ steps: [{ call: 'double', input: "{ 'n': 'x' }" }] }, {}, { library })), {
    kind: 'validation',
    message: /input of function double is invalid: n must be number/,
  })
  t.match(await refusal(run({ steps: [{ call: 'recurse' }] }, {}, { library, limits: { maxCallDepth: 4 } })), {
    kind: 'technical',
    message: /deeper than 4/,
  })
  t.match(await refusal(run({ steps: [{ call: 'missing' }] }, {}, { library })), { kind: 'notFound', details: { target: 'function' } })
})

t.test('data passes the evaluated operation to the host and stores the result', async (t) => {
  const host = fakeHost({ data: async () => [{ sku: 'a' }] })
  const result = await run(
    { steps: [{ data: 'find', collection: 'Stock', filter: "{ 'sku': input.sku }", as: 'output.found' }] },
    { sku: 'a' },
    { host },
  )
  t.same(host.dataOperations, [{ operation: 'find', collection: 'Stock', filter: { sku: 'a' } }])
  t.same(result.output, { found: [{ sku: 'a' }] })
})

t.test('info collects messages; fail stops with a business error and its code', async (t) => {
  const result = await run({ steps: [{ info: "'one'" }, { info: '{ "two": 2 }' }] })
  t.same(result.infoList, ['one', '{"two":2}'])
  t.match(
    await refusal(run({ steps: [{ info: "'before'" }, { fail: "'No budget for ' & input.item", code: 'NO_BUDGET' }] }, { item: 'car' })),
    {
      kind: 'business',
      message: 'No budget for car',
      details: { code: 'NO_BUDGET' },
    },
  )
})

t.test('input is checked before the run and output after it', async (t) => {
  const definition: FlowFunctionDefinition = {
    input: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
    output: { type: 'object', properties: { r: { type: 'string' } } },
    steps: [{ set: { 'output.r': 'input.n' } }],
  }
  t.match(await refusal(run(definition, {})), {
    kind: 'validation',
    message: /input of function subject is invalid: must have required property 'n'/,
  })
  t.match(await refusal(run(definition, { n: 1 })), {
    kind: 'validation',
    message: /output of function subject is invalid: r must be string/,
  })
})

t.test('$constant reads the app constants and $uuid the id source', async (t) => {
  const result = await run({
    steps: [{ set: { 'output.greeting': "$constant('greeting')", 'output.missing': "$constant('nope')", 'output.id': '$uuid()' } }],
  })
  t.same(result.output, { greeting: 'hello', id: 'id-1' })
})

t.test('runStandaloneFunction runs an app function with no process data and compiles it once per cache', async (t) => {
  const cache = new Map<string, CompiledFunction>()
  const definition: FlowFunctionDefinition = {
    steps: [{ set: { 'output.hasData': '$exists(data.anything)', 'output.hasProcess': '$exists(process)' } }],
  }
  const env = fakeEnvironment(actor)
  const first = await runStandaloneFunction('standalone', definition, {}, env, { functionCache: cache })
  await runStandaloneFunction('standalone', definition, {}, env, { functionCache: cache })
  t.same(first.output, { hasData: false, hasProcess: false })
  t.equal(cache.size, 1)
})

t.test('idempotency keys: the same for the same step run, node and occurrence; new for another run scope', async (t) => {
  const definition: FlowFunctionDefinition = {
    steps: [
      { http: { method: 'post', url: "'https://api.example/a'" } },
      { http: { method: 'post', url: "'https://api.example/a'" } },
      { call: 'again' },
      { call: 'again' },
    ],
  }
  const library = { again: { steps: [{ http: { method: 'post', url: "'https://api.example/b'" } }] } }
  const keysOf = async (idempotencyScope: string | undefined) => {
    const host = fakeHost({ appFunctions: library })
    const env = fakeEnvironment(actor, host)
    const compiler = new FunctionCompiler()
    const resolve = (functionId: string) => compiler.compile(functionId, library[functionId as 'again'])
    await executeFunction(
      compileFunction('subject', definition),
      { input: {}, ...(idempotencyScope === undefined ? {} : { idempotencyScope }) },
      env,
      resolve,
    )
    return host.httpRequests.map((request) => request.idempotencyKey)
  }
  const first = await keysOf('instance-1\n2026-03-01T09:00:00.000Z\nbook')
  t.equal(new Set(first).size, 4, 'each node and each occurrence of a called node has its own key')
  t.same(
    await keysOf('instance-1\n2026-03-01T09:00:00.000Z\nbook'),
    first,
    'the step re-run from the same stored state sends the same keys',
  )
  const later = await keysOf('instance-1\n2026-03-01T09:05:00.000Z\nbook')
  t.notOk(
    later.some((key) => first.includes(key)),
    'a pass after the instance changed sends new keys',
  )
  const standalone = await keysOf(undefined)
  t.notOk(
    standalone.some((key) => first.includes(key)),
    'a run outside a process has keys of its own',
  )
})
