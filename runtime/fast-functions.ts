/**
 * The functions and the string concatenation that models' expressions call most, answered as
 * JSONata answers them (its `string`, `substring` and `&`, jsonata.js), without its evaluator:
 * `$constant('name')`, `$uuid()`, `$string(x)`, `$substring(x, start[, length])` with literal
 * numbers, and `a & b`. A value JSONata would turn into text by its JSON rules (an object, an array)
 * or refuse (a number that is not finite, a non-string given to `$substring`) is left to it.
 */
import { combined, type ExpressionNode, type FastCompiler, type FastEvaluator, NOT_FAST } from './fast-evaluation.js'

/** JSONata's text of a scalar (`$string`, `&`): numbers that are not integers to 15 significant digits. */
export function textOf(value: unknown): string | typeof NOT_FAST {
  if (typeof value === 'string') return value
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return NOT_FAST
    return JSON.stringify(Number.isInteger(value) ? value : Number(value.toPrecision(15)))
  }
  if (typeof value === 'boolean' || value === null) return JSON.stringify(value)
  return NOT_FAST
}

/** `a & b`: each side's text, nothing for an undefined side. */
export function concatenation(lhs: FastEvaluator, rhs: FastEvaluator): FastEvaluator {
  return combined([lhs, rhs], ([left, right]) => {
    const leftText = left === undefined ? '' : textOf(left)
    const rightText = right === undefined ? '' : textOf(right)
    return leftText === NOT_FAST || rightText === NOT_FAST ? NOT_FAST : leftText + rightText
  })
}

/** `$substring`, as JSONata cuts: by code points, a negative start counted from the end. */
function substring(value: unknown, start: number, length: number | undefined): unknown {
  if (value === undefined) return undefined
  if (typeof value !== 'string') return NOT_FAST
  const characters = Array.from(value)
  const from = characters.length + start < 0 ? 0 : start
  if (length === undefined) return characters.slice(from).join('')
  if (length <= 0) return ''
  const end = from >= 0 ? from + length : characters.length + from + length
  return characters.slice(from, end).join('')
}

function numberLiterals(nodes: ExpressionNode[]): number[] | undefined {
  return nodes.every((node) => node.type === 'number' && typeof node.value === 'number')
    ? nodes.map((node) => node.value as number)
    : undefined
}

type FunctionCompiler = (args: ExpressionNode[], operandOf: FastCompiler) => FastEvaluator | undefined

const FUNCTIONS: Readonly<Record<string, FunctionCompiler>> = {
  constant: ([name, ...more]) =>
    more.length === 0 && name?.type === 'string' ? (_store, scope) => scope.constant(String(name.value)) : undefined,
  uuid: (args) => (args.length === 0 ? (_store, scope) => scope.uuid() : undefined),
  string: ([argument, ...more], operandOf) => {
    const operand = more.length === 0 && argument !== undefined ? operandOf(argument) : undefined
    return operand && combined([operand], ([value]) => (value === undefined ? undefined : textOf(value)))
  },
  substring: ([argument, ...bounds], operandOf) => {
    const numbers = numberLiterals(bounds)
    const operand = argument !== undefined ? operandOf(argument) : undefined
    if (!operand || !numbers || numbers.length < 1 || numbers.length > 2) return undefined
    const [start, length] = numbers as [number, number | undefined]
    return combined([operand], ([value]) => substring(value, start, length))
  },
}

/** The fast evaluator of a call of one of the functions above; undefined for any other call. */
export function functionEvaluator(node: ExpressionNode, operandOf: FastCompiler): FastEvaluator | undefined {
  const procedure = node.procedure
  if (node.value !== '(' || procedure?.type !== 'variable' || typeof procedure.value !== 'string') return undefined
  if (!Object.hasOwn(FUNCTIONS, procedure.value)) return undefined
  return (FUNCTIONS[procedure.value] as FunctionCompiler)(node.arguments ?? [], operandOf)
}
