/**
 * The shapes of expression that models write most — a literal (`true`, `'Balance ok'`), a path into
 * the store (`data.days`, `user.userId`), `$constant('name')`, and a comparison of two of those
 * (`data.days > 10`, `$constant('payrollOnline') = 'yes'`) — answered without JSONata's evaluator,
 * which allocates a frame, promises and a sequence for every node. Only where the answer is certainly
 * JSONata's: a value on the way or at the end that JSONata would treat as a sequence (an array), a
 * key of Object's prototype, or a comparison of anything but two strings, two numbers or two booleans
 * is left to JSONata (`NOT_FAST`), which also raises its errors. expressions.ts uses it; the test
 * compares both on every shape.
 */
import type { EvaluationScope, ExpressionStore } from './expressions.js'

/** The expression's answer is JSONata's to give. */
export const NOT_FAST = Symbol('not fast')

/** An expression's value from the store, or NOT_FAST. */
export type FastEvaluator = (store: ExpressionStore, scope: EvaluationScope) => unknown

/** A parsed JSONata node, as `Expression.ast()` gives it: the fields read here. */
export interface ExpressionNode {
  type: string
  value?: unknown
  steps?: ExpressionNode[]
  lhs?: ExpressionNode
  rhs?: ExpressionNode
  procedure?: ExpressionNode
  arguments?: ExpressionNode[]
  [other: string]: unknown
}

const COMPARISONS: Record<string, (a: string | number | boolean, b: string | number | boolean) => boolean> = {
  '=': (a, b) => a === b,
  '!=': (a, b) => a !== b,
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
}
/** What a path step may carry that changes its meaning (filters, sorts, binds, array keeping, ...). */
const STEP_DECORATIONS = ['stages', 'predicate', 'group', 'focus', 'index', 'tuple', 'ancestor', 'keepArray', 'consarray']
const PROTOTYPE_KEYS = new Set(Object.getOwnPropertyNames(Object.prototype))

function isPlainStep(step: ExpressionNode): boolean {
  return (
    step.type === 'name' &&
    typeof step.value === 'string' &&
    !PROTOTYPE_KEYS.has(step.value) &&
    STEP_DECORATIONS.every((decoration) => step[decoration] === undefined)
  )
}

function pathEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  const steps = node.steps
  if (!steps || steps.length === 0 || node.keepSingletonArray !== undefined || !steps.every(isPlainStep)) return undefined
  const names = steps.map((step) => step.value as string)
  return (store) => {
    let value: unknown = store
    for (const name of names) {
      if (Array.isArray(value)) return NOT_FAST
      if (typeof value !== 'object' || value === null) return undefined
      value = Object.hasOwn(value, name) ? (value as Record<string, unknown>)[name] : undefined
    }
    return Array.isArray(value) ? NOT_FAST : value
  }
}

/** `$constant('name')`: the service's constant lookup, a string or nothing. */
function constantEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  const [name, ...more] = node.arguments ?? []
  if (node.value !== '(' || node.procedure?.type !== 'variable' || node.procedure.value !== 'constant') return undefined
  if (more.length > 0 || name?.type !== 'string') return undefined
  return (_store, scope) => scope.constant(String(name.value))
}

function isComparable(value: unknown): value is string | number | boolean {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
}

function comparisonEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  const operator = node.value
  const lhs = node.lhs && operandEvaluator(node.lhs)
  const rhs = node.rhs && operandEvaluator(node.rhs)
  if (typeof operator !== 'string' || !Object.hasOwn(COMPARISONS, operator) || !lhs || !rhs) return undefined
  return (store, scope) => {
    const left = lhs(store, scope)
    const right = rhs(store, scope)
    if (left instanceof Promise || right instanceof Promise) {
      return Promise.all([left, right]).then(([a, b]) => compared(operator, a, b))
    }
    return compared(operator, left, right)
  }
}

/** JSONata orders numbers and strings only (a boolean there is its error T2010); it compares any two values for equality. */
const EQUALITIES = new Set(['=', '!='])

function compared(operator: string, left: unknown, right: unknown): unknown {
  if (!isComparable(left) || !isComparable(right) || typeof left !== typeof right) return NOT_FAST
  if (typeof left === 'boolean' && !EQUALITIES.has(operator)) return NOT_FAST
  return (COMPARISONS[operator] as (a: string | number | boolean, b: string | number | boolean) => boolean)(left, right)
}

function operandEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  if (node.type === 'string' || node.type === 'number' || node.type === 'value') return () => node.value
  if (node.type === 'path') return pathEvaluator(node)
  if (node.type === 'function') return constantEvaluator(node)
  return undefined
}

/** The fast evaluator of an expression of one of the shapes above; undefined for every other one. */
export function fastEvaluator(ast: ExpressionNode): FastEvaluator | undefined {
  return ast.type === 'binary' ? comparisonEvaluator(ast) : operandEvaluator(ast)
}
