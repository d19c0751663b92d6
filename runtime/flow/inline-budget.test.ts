import t from 'tap'
import { fakeEnvironment, fakeHost, user } from '../test-support.js'
import type { FlowFunctionDefinition, RunObserver, FunctionRunner, JsonObject } from '../types.js'
import { compileFunction, FunctionCompiler } from './compile.js'
import { executeFunction, executeInline, InlineRunInterrupt } from './execute.js'

/** Runs `definition` on this thread with an inline budget of `budgetMs` (none when undefined). */
function runInline(
  definition: FlowFunctionDefinition,
  input: JsonObject,
  budgetMs: number | undefined,
  options: { library?: Record<string, FlowFunctionDefinition>; httpDelayMs?: number } = {},
) {
  const host = fakeHost({
    ...(options.library ? { appFunctions: options.library } : {}),
    http: async () => {
      // A slow partner, not a wait of the test's: the answer comes after more than a whole budget,
      // which only passing time can show does not count against it.
      await new Promise((resolve) => setTimeout(resolve, options.httpDelayMs ?? 0))
      return { status: 200, headers: {}, body: {} }
    },
  })
  const compiler = new FunctionCompiler()
  const resolve = (functionId: string) => {
    const found = host.appFunction(functionId)
    return found && compiler.compile(functionId, found)
  }
  return executeInline(compileFunction('subject', definition), { input }, fakeEnvironment(user('ada'), host), resolve, budgetMs)
}

/** The message of the InlineRunInterrupt `run` stopped with (fails the test when it ends otherwise). */
async function interruption(run: Promise<unknown>): Promise<string> {
  const error = await run.then(
    () => new Error('expected the run to be interrupted'),
    (reason: unknown) => reason,
  )
  if (error instanceof InlineRunInterrupt) return error.message
  throw error
}

const manyEvaluations: FlowFunctionDefinition = {
  // 64,000 evaluations: far past a 1 ms budget.
  steps: [{ set: { 'output.count': '$count($$.input.items.($$.input.items.($$.input.items)))' } }],
}
const items = Array.from({ length: 40 }, (_, index) => index)

t.test('an inline run past its budget of thread time is interrupted; without a budget it runs to its end', async (t) => {
  t.match(await interruption(runInline(manyEvaluations, { items }, 1)), /^held the engine's thread over 1 ms$/)
  const result = await runInline(manyEvaluations, { items }, undefined)
  t.same(result.output, { count: 64_000 })
})

t.test('the time an inline run awaits a host call does not count against its budget', async (t) => {
  const result = await runInline(
    { steps: [{ http: { method: 'GET', url: "'https://partner.example/slow'" }, as: 'output.answer' }] },
    {},
    20,
    { httpDelayMs: 100 },
  )
  t.match(result.output, { answer: { status: 200 } })
})

t.test('an inline run with a budget is interrupted at a call of a costly function, a too large value or input', async (t) => {
  const library = { recursive: { steps: [{ set: { 'output.n': '( $f := function($n) { $n = 0 ? 0 : $f($n - 1) }; $f(3) )' } }] } }
  const calling = runInline({ steps: [{ call: 'recursive', as: 'output.called' }] }, {}, 60_000, { library })
  t.match(await interruption(calling), /^calls recursive, which /)
  const words = Array.from({ length: 20_000 }, () => 'word')
  const joining = runInline({ steps: [{ set: { 'output.length': '$length($join(input.words, " "))' } }] }, { words }, 60_000)
  t.match(await interruption(joining), /^produced /)
  const schema = { type: 'object', properties: { words: { type: 'array' } } }
  t.match(await interruption(runInline({ input: schema, steps: [] }, { words }, 60_000)), /^has an input too large to check/)

  const called = await runInline({ steps: [{ call: 'recursive', as: 'output.called' }] }, {}, undefined, { library })
  t.same(called.output, { called: { n: 0 } }, 'without a budget the same run goes through')
})

t.test("a run goes through the environment's FunctionRunner, and its observer hears how it went", async (t) => {
  const runs: string[] = []
  const functionRunner: FunctionRunner = {
    run: async (fn, request, env, resolve) => {
      runs.push(fn.functionId)
      return executeInline(fn, request, env, resolve)
    },
  }
  const outcomes: string[] = []
  const observer: RunObserver = { functionRan: (functionId, outcome) => void outcomes.push(`${functionId}: ${outcome}`) }
  const env = { ...fakeEnvironment(user('ada')), functionRunner, observer }
  const result = await executeFunction(
    compileFunction('subject', { steps: [{ set: { 'output.n': '1 + 1' } }] }),
    { input: {} },
    env,
    () => undefined,
  )
  t.same(result.output, { n: 2 })
  t.same(runs, ['subject'])
  t.same(outcomes, ['subject: ok'])
})
