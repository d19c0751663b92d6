/**
 * What the fast evaluators of expressions (fast-expressions.ts, fast-functions.ts) share: the marker
 * of an answer left to JSONata, the parsed node they read, and the combination of several operands'
 * values, synchronous unless one of them (a constant) is read asynchronously.
 */
import type { EvaluationScope, ExpressionStore } from './expressions.js'

/** The expression's answer is JSONata's to give. */
export const NOT_FAST = Symbol('not fast')

/** An expression's value from the store, NOT_FAST, or a promise of either. */
export type FastEvaluator = (store: ExpressionStore, scope: EvaluationScope) => unknown

/** A parsed JSONata node, as `Expression.ast()` gives it: the fields read here. */
export interface ExpressionNode {
  type: string
  value?: unknown
  steps?: ExpressionNode[]
  lhs?: ExpressionNode | ExpressionNode[][]
  rhs?: ExpressionNode
  procedure?: ExpressionNode
  arguments?: ExpressionNode[]
  [other: string]: unknown
}

/** Compiles a node to its fast evaluator, or undefined when the node is JSONata's. */
export type FastCompiler = (node: ExpressionNode) => FastEvaluator | undefined

/** What a node may carry that changes its meaning (filters, sorts, binds, array keeping, ...). */
const NODE_DECORATIONS = ['stages', 'predicate', 'group', 'focus', 'index', 'tuple', 'ancestor', 'keepArray', 'consarray']

export function isUndecorated(node: ExpressionNode): boolean {
  return NODE_DECORATIONS.every((decoration) => node[decoration] === undefined)
}

/** Keys of Object's prototype (`__proto__` among them), which JSONata refuses in a path and would assign as the prototype in an object. */
export const PROTOTYPE_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * The evaluator of `combine` over the operands' values, each evaluated against the same store. The
 * operands only read (paths, literals, constants, a new uuid), so they are evaluated side by side; an
 * operand that is NOT_FAST makes the whole NOT_FAST.
 */
export function combined(operands: FastEvaluator[], combine: (values: unknown[]) => unknown): FastEvaluator {
  const finish = (values: unknown[]): unknown => (values.includes(NOT_FAST) ? NOT_FAST : combine(values))
  return (store, scope) => {
    const values = operands.map((operand) => operand(store, scope))
    return values.some((value) => value instanceof Promise) ? Promise.all(values).then(finish) : finish(values)
  }
}
