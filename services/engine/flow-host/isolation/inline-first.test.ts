import t from 'tap'
import { fakeEnvironment, fakeHost, user } from '../../../../runtime/test-support.js'
import type {
  FlowFunctionDefinition,
  FunctionIsolation,
  FunctionRunRequest,
  JsonObject,
  RunLimits,
  Savepoints,
} from '../../../../runtime/types.js'
import { compileFunction, FunctionCompiler } from '../../../../runtime/flow/compile.js'
import { executeFunction, executeInline } from '../../../../runtime/flow/execute.js'
import { InlineFirstRunner, type PoolReason } from './inline-first.js'

/** A worker pool stand-in: runs the function inline on the host it is given, and records each run. */
function recordingIsolation(): FunctionIsolation & { runs: FunctionRunRequest[] } {
  const compiler = new FunctionCompiler()
  const runs: FunctionRunRequest[] = []
  return {
    runs,
    run: async (run, env, resolve) => {
      runs.push(run.request)
      const compiled = compiler.compile(run.functionId, run.definition)
      return executeInline(compiled, run.request, env, async (functionId) => {
        const definition = await resolve(functionId)
        return definition && compiler.compile(functionId, definition)
      })
    },
  }
}

function recordingSavepoints(): Savepoints & { discarded: number[] } {
  let marks = 0
  const discarded: number[] = []
  return { discarded, mark: () => marks++, discardSince: (mark) => void discarded.push(mark) }
}

async function runWithPool(
  definition: FlowFunctionDefinition,
  input: JsonObject,
  limits: Partial<RunLimits> = {},
  library: Record<string, FlowFunctionDefinition> = {},
) {
  const host = fakeHost({ appFunctions: library })
  const isolation = recordingIsolation()
  const savepoints = recordingSavepoints()
  const moved: PoolReason[] = []
  const runner = new InlineFirstRunner(isolation, savepoints, (reason) => moved.push(reason))
  const env = { ...fakeEnvironment(user('ada'), host, limits), functionRunner: runner }
  const compiler = new FunctionCompiler()
  const resolve = (functionId: string) => {
    const found = host.appFunction(functionId)
    return found && compiler.compile(functionId, found)
  }
  const result = await executeFunction(compileFunction('subject', definition), { input }, env, resolve)
  return { result, host, isolation, savepoints, moved }
}

t.test('a cheap function runs on the engine thread and never reaches the pool', async (t) => {
  // A budget no machine can exhaust here: what keeps it on the engine's thread is what it uses, not how busy the machine is.
  const { result, isolation, moved } = await runWithPool(
    { steps: [{ set: { 'output.total': '$sum(input.amounts)' } }] },
    { amounts: [1, 2, 3] },
    { inlineBudgetMs: 60_000 },
  )
  t.same(result.output, { total: 6 })
  t.equal(isolation.runs.length, 0)
  t.same(moved, [], 'nothing is counted as moved')
})

t.test('a function that defines a function, uses a range or $sort goes to the pool from its first step', async (t) => {
  for (const expression of [
    '( $f := function($n) { $n * 2 }; $f(2) )',
    '$count([1..3])',
    '$sort(input.amounts)[0]',
    "$eval('1 + 1')",
    '$pad("", 3)',
  ]) {
    const { isolation, moved } = await runWithPool({ steps: [{ set: { 'output.value': expression } }] }, { amounts: [3, 1] })
    t.equal(isolation.runs.length, 1, expression)
    t.same(moved, ['costly'], `${expression}: counted as costly`)
    t.equal(isolation.runs[0]?.spentMs, undefined, `${expression}: nothing was spent before`)
  }
})

t.test('a function calling a costly function moves to the pool when it reaches the call', async (t) => {
  const { result, isolation, savepoints, moved } = await runWithPool(
    {
      steps: [
        { data: 'insert', collection: 'Log', doc: "{ 'at': 1 }" },
        { call: 'recursive', as: 'output.called' },
      ],
    },
    {},
    // A budget no machine can exhaust here: the call, not the machine's speed, is what moves it.
    { inlineBudgetMs: 60_000 },
    { recursive: { steps: [{ set: { 'output.n': '( $f := function($n) { $n = 0 ? 0 : $f($n - 1) }; $f(3) )' } }] } },
  )
  t.same(result.output, { called: { n: 0 } })
  t.equal(isolation.runs.length, 1)
  t.same(savepoints.discarded, [0], 'the data write of the first attempt is discarded, the pool run makes it again')
  t.same(moved, ['costlyCall'])
})

t.test('a function past its thread budget moves to the pool with the time it spent and the answers of its calls', async (t) => {
  const items = Array.from({ length: 40 }, (_, index) => index)
  const { result, host, isolation, savepoints, moved } = await runWithPool(
    {
      steps: [
        { http: { method: 'POST', url: "'https://partner.example/reserve'", body: '{ "n": 1 }' }, as: 'vars.reserved' },
        { data: 'insert', collection: 'Log', doc: "{ 'at': 1 }" },
        // 64,000 evaluations: far past a 1 ms budget.
        { set: { 'output.count': '$count($$.input.items.($$.input.items.($$.input.items)))', 'output.status': 'vars.reserved.status' } },
      ],
    },
    { items },
    { inlineBudgetMs: 1 },
  )
  t.same(result.output, { count: 64_000, status: 200 })
  t.equal(isolation.runs.length, 1)
  t.ok((isolation.runs[0]?.spentMs ?? 0) > 0, 'the pool run knows the time already spent')
  t.equal(host.httpRequests.length, 1, 'the outbound call went out once: the pool run got its answer again')
  t.same(savepoints.discarded, [0])
  t.same(moved, ['threadTime'])
})

t.test('a function producing a very large value moves to the pool before any builtin works on it', async (t) => {
  const words = Array.from({ length: 20_000 }, () => 'word')
  const { result, isolation, moved } = await runWithPool(
    { steps: [{ set: { 'output.length': '$length($join(input.words, " "))' } }] },
    { words },
    // A budget no machine can exhaust here: on a busy machine the default 20 ms could run out first, and the reason would be time.
    { inlineBudgetMs: 60_000 },
  )
  t.same(result.output, { length: 20_000 * 5 - 1 })
  t.equal(isolation.runs.length, 1)
  t.same(moved, ['largeValue'])
})

t.test('with FLOW_INLINE_BUDGET_MS 0 every run goes to the pool', async (t) => {
  const { isolation, moved } = await runWithPool({ steps: [{ set: { 'output.total': '1 + 1' } }] }, {}, { inlineBudgetMs: 0 })
  t.equal(isolation.runs.length, 1)
  t.same(moved, ['inlineOff'])
})

t.test('a run moved to the pool keeps the limit of the whole run, not a fresh one', async (t) => {
  const isolation = recordingIsolation()
  const env = {
    ...fakeEnvironment(user('ada'), fakeHost(), { timeoutMs: 60_000 }),
    functionRunner: new InlineFirstRunner(isolation, recordingSavepoints()),
  }
  // A value too large for the engine's thread: the run moves to the pool after its first step, whatever the machine's speed.
  const compiled = compileFunction('subject', { steps: [{ set: { 'output.length': '$length($join(input.words, " "))' } }] })
  const words = Array.from({ length: 20_000 }, () => 'word')
  await executeFunction(compiled, { input: { words }, spentMs: 45 }, env, () => undefined)
  t.equal(isolation.runs.length, 1, 'moved to the pool')
  t.ok((isolation.runs[0]?.spentMs ?? 0) >= 45, 'the pool is given the time the run took before, earlier attempts included')

  // And the pool's run counts that time against the limit: with the whole limit spent, even one cheap step is refused.
  const spent = {
    ...fakeEnvironment(user('ada'), fakeHost(), { timeoutMs: 50, inlineBudgetMs: 0 }),
    functionRunner: new InlineFirstRunner(isolation, recordingSavepoints()),
  }
  await t.rejects(
    executeFunction(
      compileFunction('cheap', { steps: [{ set: { 'output.total': '1 + 1' } }] }),
      { input: {}, spentMs: 51 },
      spent,
      () => undefined,
    ),
    { kind: 'technical', message: /ran longer than 50 ms/ },
  )
  t.equal(isolation.runs.length, 2, 'refused in the pool')
})
