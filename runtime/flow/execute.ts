/**
 * Runs a compiled flow function against its store (docs/reference/flow-functions.md#the-store-of-an-expression). One run has one deadline
 * (`limits.timeoutMs`, which also bounds awaited host calls), one budget of executed nodes
 * (`limits.maxSteps`, shared with the functions it calls) and a call depth (`limits.maxCallDepth`).
 * The run works on a copy of the data: the caller adopts the copy only when the run succeeded.
 */
import { createHash } from 'node:crypto'
import { deepCopy } from '../../lib/deep-copy.js'
import { performance } from 'node:perf_hooks'
import type { CompiledExpression, EvaluationScope, ExpressionStore } from '../expressions.js'
import { EvaluationInterrupt, toJsonValue } from '../expressions.js'
import { assignAtPath, type AssignmentPath, type WritableRoot } from '../../model/paths.js'
import {
  type FlowHost,
  type FunctionResolver,
  type FunctionRunner,
  type FunctionRunRequest,
  type FunctionRunOutcome,
  type FunctionRunResult,
  type JsonObject,
  type ProcessInstance,
  type ProcessView,
  RuntimeError,
  type RunEnvironment,
} from '../types.js'
import type { CompiledFunction, CompiledNode } from './compile.js'
import { checksInline } from './input-check.js'
import { oversizedResult } from '../../model/expression-cost.js'

export type { FunctionRunRequest, ProcessView }

export function processView(instance: ProcessInstance): ProcessView {
  const { processInstanceId, processId, businessKey, processStatus, initiator } = instance
  return Object.freeze({ processInstanceId, processId, businessKey, processStatus, initiator })
}

/** What a run needs of its environment: of the host only its constants, HTTP and data (a worker has no more). */
export type FunctionEnvironment = Pick<RunEnvironment, 'actor' | 'limits' | 'now' | 'newId'> & {
  host: Pick<FlowHost, 'constant' | 'http' | 'data'>
}

interface Run {
  readonly env: FunctionEnvironment
  readonly resolve: FunctionResolver
  readonly deadline: number
  readonly scope: EvaluationScope
  readonly infoList: string[]
  /** `idempotency-key`s derive from it; how often each http node ran in this run tells repeats apart. */
  idempotencyScope: string | undefined
  readonly httpOccurrences: Map<string, number>
  stepsLeft: number
  /** Set for an inline run with a budget: the thread time it may hold before it is interrupted. */
  readonly inlineBudget: InlineBudget | undefined
}

/** How long an inline run with a budget has held the thread: its time so far minus what it awaited. */
interface InlineBudget {
  readonly busyMs: number
  readonly startedAt: number
  waitedMs: number
}

/**
 * Thrown inside an inline run with a budget when the run must not go on on this thread (too much
 * thread time, a too large value, a costly called function, an input too large to check here); the
 * FunctionRunner that gave the budget catches it and runs the function elsewhere.
 */
export class InlineRunInterrupt extends EvaluationInterrupt {
  constructor(
    /** Why, in one word a metric can count. */
    readonly reason: InlineStopReason,
    message: string,
  ) {
    super(message)
  }
}

/** Why an inline run stopped: thread time spent, a costly function called, a too large input or value. */
export type InlineStopReason = 'threadTime' | 'costlyCall' | 'largeInput' | 'largeValue'

function checkInlineBudget(budget: InlineBudget | undefined): void {
  if (budget && performance.now() - budget.startedAt - budget.waitedMs > budget.busyMs)
    throw new InlineRunInterrupt('threadTime', `held the engine's thread over ${budget.busyMs} ms`)
}

/** Awaits something that does not hold the thread (a host call): the inline budget does not count it. */
async function awaited<T>(run: Run, pending: T | Promise<T>): Promise<T> {
  if (!run.inlineBudget) return pending
  const before = performance.now()
  try {
    return await pending
  } finally {
    run.inlineBudget.waitedMs += performance.now() - before
  }
}

/** What one function invocation (the run's own or a `call`) works on. */
interface Frame {
  readonly store: ExpressionStore
  readonly roots: Record<WritableRoot, Record<string, unknown>>
}

function technical(message: string, location?: string): RuntimeError {
  return new RuntimeError('technical', message, location === undefined ? {} : { path: location })
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Awaits a host call, but never past the run's deadline. */
async function withinDeadline<T>(run: Run, what: string, call: () => Promise<T>): Promise<T> {
  const remaining = run.deadline - performance.now()
  if (remaining <= 0) throw technical(`the function ran longer than ${run.env.limits.timeoutMs} ms`)
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(technical(`the function ran longer than ${run.env.limits.timeoutMs} ms (waiting for ${what})`)),
      remaining,
    )
  })
  try {
    return await awaited(run, Promise.race([call(), expired]))
  } finally {
    clearTimeout(timer)
  }
}

function hostFailure(error: unknown, location: string): RuntimeError {
  if (error instanceof RuntimeError) return error
  return technical(`${location}: ${error instanceof Error ? error.message : String(error)}`, location)
}

function evaluate(expression: CompiledExpression, frame: Frame, run: Run): Promise<unknown> {
  return expression.evaluate(frame.store, run.scope)
}

function assign(frame: Frame, path: AssignmentPath | undefined, value: unknown): void {
  if (path) assignAtPath(frame.roots, path, value)
}

function describeInvalid(functionId: string, what: 'input' | 'output', messages: string[]): RuntimeError {
  const problem = messages.join('; ')
  return new RuntimeError('validation', `the ${what} of function ${functionId} is invalid: ${problem}`, {
    path: `functions.${functionId}.${what}`,
    problem,
  })
}

function headerValues(value: unknown, location: string): Record<string, string> {
  if (value === undefined || value === null) return {}
  if (!isRecord(value)) throw technical(`${location}: headers must be an object`, location)
  const headers: Record<string, string> = {}
  for (const [name, header] of Object.entries(value)) {
    if (header !== undefined && header !== null) headers[name.toLowerCase()] = typeof header === 'string' ? header : JSON.stringify(header)
  }
  return headers
}

async function executeNodes(nodes: readonly CompiledNode[], frame: Frame, run: Run, depth: number): Promise<void> {
  for (const node of nodes) {
    run.stepsLeft--
    if (run.stepsLeft < 0) throw technical(`the function ran more than ${run.env.limits.maxSteps} steps`)
    run.scope.checkDeadline()
    await executeNode(node, frame, run, depth)
  }
}

async function executeNode(node: CompiledNode, frame: Frame, run: Run, depth: number): Promise<void> {
  switch (node.kind) {
    case 'set':
      for (const { path, value } of node.assignments) assign(frame, path, await evaluate(value, frame, run))
      return
    case 'if':
      await executeNodes((await evaluate(node.condition, frame, run)) ? node.then : node.else, frame, run, depth)
      return
    case 'info': {
      const message = await evaluate(node.message, frame, run)
      if (message !== undefined && message !== null) run.infoList.push(typeof message === 'string' ? message : JSON.stringify(message))
      return
    }
    case 'fail': {
      const message = await evaluate(node.message, frame, run)
      throw new RuntimeError(
        'business',
        typeof message === 'string' ? message : JSON.stringify(message ?? 'failed'),
        node.code === undefined ? {} : { code: node.code },
      )
    }
    case 'http': {
      const url = await evaluate(node.url, frame, run)
      if (typeof url !== 'string' || url === '') throw technical(`${node.location}: the url must be a string`, node.location)
      const headers = headerValues(node.headers ? await evaluate(node.headers, frame, run) : undefined, node.location)
      const body = node.body ? await evaluate(node.body, frame, run) : undefined
      const remaining = Math.max(1, Math.floor(run.deadline - performance.now()))
      const timeoutMs = Math.min(node.timeoutMs ?? remaining, remaining)
      const idempotencyKey = idempotencyKeyOf(run, node.location)
      const response = await withinDeadline(run, `${node.method} ${url}`, () =>
        run.env.host
          .http({ method: node.method, url, headers, timeoutMs, idempotencyKey, ...(body === undefined ? {} : { body }) })
          .catch((error: unknown) => {
            throw hostFailure(error, node.location)
          }),
      )
      assign(frame, node.as, { status: response.status, headers: response.headers, body: toJsonValue(response.body, node.location) })
      return
    }
    case 'data': {
      const operation = {
        operation: node.operation,
        collection: node.collection,
        ...(node.doc ? { doc: await evaluate(node.doc, frame, run) } : {}),
        ...(node.filter ? { filter: await evaluate(node.filter, frame, run) } : {}),
        ...(node.set ? { set: await evaluate(node.set, frame, run) } : {}),
        ...(node.upsert ? { upsert: Boolean(await evaluate(node.upsert, frame, run)) } : {}),
      }
      const result = await withinDeadline(run, `the ${node.collection} collection`, () =>
        run.env.host.data(operation).catch((error: unknown) => {
          throw hostFailure(error, node.location)
        }),
      )
      assign(frame, node.as, toJsonValue(result, node.location))
      return
    }
    case 'call': {
      if (depth >= run.env.limits.maxCallDepth)
        throw technical(`${node.location}: calls nest deeper than ${run.env.limits.maxCallDepth}`, node.location)
      const callee = await awaited(run, run.resolve(node.functionId))
      if (!callee)
        throw new RuntimeError('notFound', `${node.location}: function ${node.functionId} not found`, {
          target: 'function',
          path: node.location,
        })
      if (run.inlineBudget && callee.costly) throw new InlineRunInterrupt('costlyCall', `calls ${node.functionId}, which ${callee.costly}`)
      const input = node.input ? await evaluate(node.input, frame, run) : {}
      const output = await invoke(
        callee,
        input,
        { data: frame.roots.data, process: frame.store.process, task: frame.store.task },
        run,
        depth + 1,
      )
      assign(frame, node.as, output)
      return
    }
  }
}

/**
 * The `idempotency-key` of an http node's call: a digest of the run's scope (instance, stored
 * revision, step), the node's location and how often the node ran before in this run. A step that
 * runs again from the same stored state (its request was rolled back, or repeated) sends the same
 * keys; a later pass through the step, after the instance changed, sends new ones.
 */
function idempotencyKeyOf(run: Run, location: string): string {
  const occurrence = (run.httpOccurrences.get(location) ?? 0) + 1
  run.httpOccurrences.set(location, occurrence)
  // A run outside a process (standalone) is its own scope: every run is new.
  run.idempotencyScope ??= `run:${run.env.newId()}`
  return createHash('sha256').update(`${run.idempotencyScope}\n${location}\n${occurrence}`).digest('base64url').slice(0, 32)
}

interface SharedContext {
  data: Record<string, unknown>
  process: unknown
  task: unknown
}

/** One function invocation: its own input, output and vars; the run's data, process and task. */
async function invoke(fn: CompiledFunction, input: unknown, shared: SharedContext, run: Run, depth: number): Promise<JsonObject> {
  if (run.inlineBudget && fn.definition.input !== undefined && !checksInline(input))
    throw new InlineRunInterrupt('largeInput', `has an input too large to check against its schema on the engine's thread`)
  const inputProblems = fn.checkInput(input)
  if (inputProblems.length > 0) throw describeInvalid(fn.functionId, 'input', inputProblems)
  // Checking a tenant's schema is the tenant's work: it counts against the run's limit and inline budget.
  run.scope.checkDeadline()
  const output: Record<string, unknown> = {}
  const vars: Record<string, unknown> = {}
  const frame: Frame = {
    store: { input, data: shared.data, output, vars, process: shared.process, user: run.env.actor, task: shared.task },
    roots: { data: shared.data, output, vars },
  }
  await executeNodes(fn.nodes, frame, run, depth)
  const outputProblems = fn.checkOutput(output)
  if (outputProblems.length > 0) throw describeInvalid(fn.functionId, 'output', outputProblems)
  run.scope.checkDeadline()
  return output
}

/**
 * Runs a function through the environment's FunctionRunner (inline without one) and tells the
 * environment's observer how it went.
 */
export async function executeFunction(
  fn: CompiledFunction,
  request: FunctionRunRequest,
  env: RunEnvironment,
  resolve: FunctionResolver,
): Promise<FunctionRunResult> {
  const { observer } = env
  const runner = env.functionRunner ?? inlineRunner
  if (!observer) return runner.run(fn, request, env, resolve)
  const startedAt = performance.now()
  const seconds = (): number => (performance.now() - startedAt) / 1000
  try {
    const result = await runner.run(fn, request, env, resolve)
    observer.functionRan(fn.functionId, 'ok', seconds())
    return result
  } catch (error) {
    const limitMs = env.limits.timeoutMs - (request.spentMs ?? 0)
    observer.functionRan(fn.functionId, runOutcome(error, performance.now() - startedAt >= limitMs), seconds())
    throw error
  }
}

/** A failure that came once the time limit had passed is the limit's doing, whatever its message. */
function runOutcome(error: unknown, pastLimit: boolean): FunctionRunOutcome {
  if (error instanceof RuntimeError && (error.kind === 'business' || error.kind === 'validation')) return 'business'
  return pastLimit ? 'timeout' : 'technical'
}

/** The runner without isolation: every run on this thread, bounded by its deadline and step budget only. */
export const inlineRunner: FunctionRunner = {
  run: (fn, request, env, resolve) => executeInline(fn, request, env, resolve),
}

/**
 * Runs a function on this thread, bounded by the run's deadline (what is left of `limits.timeoutMs`
 * after `request.spentMs`) and step budget; with `inlineBudgetMs`, also by the thread time it may hold
 * and the work it may do here (InlineRunInterrupt).
 */
export async function executeInline(
  fn: CompiledFunction,
  request: FunctionRunRequest,
  env: FunctionEnvironment,
  resolve: FunctionResolver,
  inlineBudgetMs?: number,
): Promise<FunctionRunResult> {
  const deadline = performance.now() + env.limits.timeoutMs - (request.spentMs ?? 0)
  const inlineBudget = inlineBudgetMs === undefined ? undefined : { busyMs: inlineBudgetMs, startedAt: performance.now(), waitedMs: 0 }
  const run: Run = {
    env,
    resolve,
    deadline,
    infoList: [],
    idempotencyScope: request.idempotencyScope,
    httpOccurrences: new Map(),
    stepsLeft: env.limits.maxSteps,
    inlineBudget,
    scope: {
      constant: (name) => withinDeadline(run, `the constant ${name}`, () => env.host.constant(name)),
      uuid: () => env.newId(),
      checkDeadline: () => {
        if (performance.now() > deadline) throw technical(`the function ran longer than ${env.limits.timeoutMs} ms`)
        checkInlineBudget(inlineBudget)
      },
      checkResult: (value) => {
        const oversized = inlineBudget && oversizedResult(value)
        if (oversized) throw new InlineRunInterrupt('largeValue', `produced ${oversized}`)
      },
    },
  }
  const data = request.data === undefined ? {} : deepCopy(request.data)
  const output = await invoke(fn, request.input, { data, process: request.process, task: request.task }, run, 0)
  return { dataInstance: data, output, infoList: run.infoList }
}
