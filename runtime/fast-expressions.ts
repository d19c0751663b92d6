/**
 * The shapes of expression that models write most — a literal (`true`, `'Balance ok'`), a path into
 * the store (`data.days`, `user.userId`), a comparison (`data.days > 10`), an object of named values
 * (`{ 'days': data.days }`), and the calls and concatenations of fast-functions.ts
 * (`$string(data.days) & ' days'`, `$constant('payrollOnline') = 'yes'`) — answered without JSONata's
 * evaluator, which allocates a frame, promises and a sequence for every node. Only where the answer
 * is certainly JSONata's: a value on the way or at the end that JSONata would treat as a sequence (an
 * array), a key of Object's prototype, an ordering of anything but two strings or two numbers, or an
 * equality of objects is left to JSONata (`NOT_FAST`), which also raises its errors. expressions.ts
 * uses it; the test compares both on every shape.
 */
import { combined, type ExpressionNode, type FastEvaluator, isUndecorated, NOT_FAST, PROTOTYPE_KEYS } from './fast-evaluation.js'
import { concatenation, functionEvaluator } from './fast-functions.js'

export { type ExpressionNode, type FastEvaluator, NOT_FAST } from './fast-evaluation.js'

type Comparable = string | number | boolean

const ORDERINGS: Record<string, (a: Comparable, b: Comparable) => boolean> = {
  '<': (a, b) => a < b,
  '<=': (a, b) => a <= b,
  '>': (a, b) => a > b,
  '>=': (a, b) => a >= b,
}

function isPlainStep(step: ExpressionNode): boolean {
  return step.type === 'name' && typeof step.value === 'string' && !PROTOTYPE_KEYS.has(step.value) && isUndecorated(step)
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

function isScalar(value: unknown): value is Comparable | null {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value === null
}

/** JSONata's `=` and `!=`: false when a side is undefined, else whether the values are (deeply) equal. */
function equality(negated: boolean): (values: unknown[]) => unknown {
  return ([left, right]) => {
    if (left === undefined || right === undefined) return false
    if (!isScalar(left) || !isScalar(right)) return NOT_FAST
    return (left === right) !== negated
  }
}

/** JSONata orders two strings or two numbers; undefined when a side is; anything else is its error. */
function ordering(order: (a: Comparable, b: Comparable) => boolean): (values: unknown[]) => unknown {
  return ([left, right]) => {
    const orderable = (value: unknown): boolean => value === undefined || typeof value === 'string' || typeof value === 'number'
    if (!orderable(left) || !orderable(right)) return NOT_FAST
    if (left === undefined || right === undefined) return undefined
    return typeof left === typeof right ? order(left as Comparable, right as Comparable) : NOT_FAST
  }
}

function binaryEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  const operator = node.value
  const lhs = node.lhs && !Array.isArray(node.lhs) ? fastEvaluator(node.lhs) : undefined
  const rhs = node.rhs && fastEvaluator(node.rhs)
  if (typeof operator !== 'string' || !lhs || !rhs) return undefined
  if (operator === '&') return concatenation(lhs, rhs)
  if (operator === '=' || operator === '!=') return combined([lhs, rhs], equality(operator === '!='))
  const order = Object.hasOwn(ORDERINGS, operator) ? ORDERINGS[operator] : undefined
  return order && combined([lhs, rhs], ordering(order))
}

/** `{ 'name': value, ... }` of distinct literal names: each defined value under its name (JSONata's object of one input). */
function objectEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  const pairs = node.lhs
  if (node.value !== '{' || !Array.isArray(pairs)) return undefined
  const names: string[] = []
  const values: FastEvaluator[] = []
  for (const [key, value] of pairs) {
    const name = key?.type === 'string' ? key.value : undefined
    const evaluate = value && fastEvaluator(value)
    if (typeof name !== 'string' || PROTOTYPE_KEYS.has(name) || names.includes(name) || !evaluate) return undefined
    names.push(name)
    values.push(evaluate)
  }
  return combined(values, (evaluated) => {
    const object: Record<string, unknown> = {}
    evaluated.forEach((value, i) => {
      if (value !== undefined) object[names[i] as string] = value
    })
    return object
  })
}

/** The fast evaluator of an expression of one of the shapes above; undefined for every other one. */
export function fastEvaluator(node: ExpressionNode): FastEvaluator | undefined {
  if (!isUndecorated(node)) return undefined
  switch (node.type) {
    case 'string':
    case 'number':
    case 'value':
      return () => node.value
    case 'path':
      return pathEvaluator(node)
    case 'function':
      return functionEvaluator(node, fastEvaluator)
    case 'binary':
      return binaryEvaluator(node)
    case 'unary':
      return objectEvaluator(node)
    default:
      return undefined
  }
}
