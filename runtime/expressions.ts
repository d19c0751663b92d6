/**
 * JSONata expressions of a model, compiled once and evaluated against their store
 * (`input`, `data`, `output`, `vars`, `process`, `user`, `task`). An expression sees only that
 * store and the two functions the service adds (`$constant`, `$uuid`): JSONata has no access to Node's
 * globals, the file system or the process, and refuses prototype keys such as `constructor`.
 */
import jsonata from 'jsonata'
import { costlyConstruct } from '../model/expression-cost.js'
import { parseExpression } from '../model/expression-syntax.js'
import { defineOwn } from '../model/paths.js'
import { type ExpressionNode, fastEvaluator, NOT_FAST } from './fast-expressions.js'
import { RuntimeError } from './types.js'

/** What an evaluation may reach outside the store, and the run's deadline. */
export interface EvaluationScope {
  constant(name: string): Promise<string | undefined>
  uuid(): string
  /** Throws once the run is out of time; checked on every node JSONata evaluates. */
  checkDeadline(): void
  /** Throws when a node's result is too large to go on with here; checked on every node's result. */
  checkResult(value: unknown): void
}

/** The store an expression is evaluated against (docs/reference/flow-functions.md#the-store-of-an-expression). */
export interface ExpressionStore {
  input?: unknown
  data?: unknown
  output?: unknown
  vars?: unknown
  process?: unknown
  user?: unknown
  task?: unknown
}

/**
 * Thrown by a scope's checks to stop an evaluation for a reason of the caller's (not a fault of the
 * expression): it leaves `evaluate` as it is, where other errors become the runtime's technical error.
 */
export class EvaluationInterrupt extends Error {}

export interface CompiledExpression {
  readonly source: string
  /** Where the expression sits in the model, for error messages (`steps.route.cases[0].when`). */
  readonly location: string
  /** A construct whose single step can be unboundedly slow (expression-cost.ts), or undefined. */
  readonly costly: string | undefined
  evaluate(store: ExpressionStore, scope: EvaluationScope): Promise<unknown>
}

const SCOPE_BINDING = '__evaluationScope'
const EVALUATE_ENTRY_HOOK = Symbol.for('jsonata.__evaluate_entry')
const EVALUATE_EXIT_HOOK = Symbol.for('jsonata.__evaluate_exit')

interface JsonataFrame {
  base: { lookup(name: string): unknown }
}

/**
 * The compiled expression is shared by concurrent runs, so the deadline cannot live on it: each
 * evaluation binds its own scope and this hook, called by JSONata on every node, finds it on the
 * evaluation's base frame.
 */
function checkDeadlineHook(_node: unknown, _input: unknown, frame: JsonataFrame): void {
  const scope = frame.base.lookup(SCOPE_BINDING) as EvaluationScope | undefined
  scope?.checkDeadline()
}

function checkResultHook(_node: unknown, _input: unknown, frame: JsonataFrame, result: unknown): void {
  const scope = frame.base.lookup(SCOPE_BINDING) as EvaluationScope | undefined
  scope?.checkResult(result)
}

interface JsonataFailure {
  message?: string
  code?: string
}

function failureMessage(error: unknown): string {
  if (error instanceof Error) return error.message
  const { message, code } = (error ?? {}) as JsonataFailure
  return message ?? code ?? String(error)
}

export function compileExpression(source: string, location: string): CompiledExpression {
  let compiled: jsonata.Expression
  try {
    compiled = parseExpression(source)
  } catch (error) {
    // Models are validated on insert, so this only happens for a model stored by other means.
    throw new Error(`${location} is not a valid expression: ${failureMessage(error)}`, { cause: error })
  }
  compiled.assign(EVALUATE_ENTRY_HOOK as unknown as string, checkDeadlineHook)
  compiled.assign(EVALUATE_EXIT_HOOK as unknown as string, checkResultHook)
  const fast = fastEvaluator(compiled.ast() as ExpressionNode)
  return {
    source,
    location,
    costly: costlyConstruct(compiled.ast()),
    async evaluate(store, scope) {
      try {
        if (fast) {
          scope.checkDeadline()
          const value: unknown = await fast(store, scope)
          if (value !== NOT_FAST) {
            scope.checkResult(value)
            return toJsonValue(value, location)
          }
        }
        const bindings = {
          [SCOPE_BINDING]: scope,
          constant: (name: unknown) => scope.constant(String(name)),
          uuid: () => scope.uuid(),
        }
        return toJsonValue(await compiled.evaluate(store, bindings), location)
      } catch (error) {
        if (error instanceof RuntimeError || error instanceof EvaluationInterrupt) throw error
        throw new RuntimeError('technical', `${location}: ${failureMessage(error)}`, { path: location })
      }
    },
  }
}

/**
 * A JSONata result as plain JSON: sequences become arrays, `undefined` members are dropped, and a
 * function (a lambda the expression returned) is refused, so nothing but data reaches the state.
 * The copy also keeps a result from aliasing the store it was read from.
 */
export function toJsonValue(value: unknown, location: string): unknown {
  if (value === null || value === undefined) return value
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value))
        throw new RuntimeError('technical', `${location}: the result ${String(value)} is not a JSON number`, { path: location })
      return value
    case 'object': {
      if (Array.isArray(value)) return value.filter((item) => item !== undefined).map((item) => toJsonValue(item, location))
      const copy: Record<string, unknown> = {}
      for (const [key, member] of Object.entries(value)) {
        if (member !== undefined) defineOwn(copy, key, toJsonValue(member, location))
      }
      return copy
    }
    default:
      throw new RuntimeError('technical', `${location}: the result is a ${typeof value}, not data`, { path: location })
  }
}
