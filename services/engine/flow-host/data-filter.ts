import { mongoRegexProblem } from '../../../store/regex.js'

/**
 * The query operators a filter that comes from outside (a flow function's `data` node, a data
 * search) may use (docs/reference/data.md#filters): comparisons and logic only, nothing that runs code or reaches
 * other collections.
 */
export const ALLOWED_FILTER_OPERATORS: ReadonlySet<string> = new Set([
  '$eq',
  '$ne',
  '$gt',
  '$gte',
  '$lt',
  '$lte',
  '$in',
  '$nin',
  '$and',
  '$or',
  '$nor',
  '$not',
  '$exists',
  '$regex',
  '$options',
  '$elemMatch',
  '$size',
])

/** The first operator of `filter` (at any depth) that is not allowed, or undefined when all are. */
export function disallowedOperator(filter: unknown): string | undefined {
  if (Array.isArray(filter)) {
    for (const item of filter) {
      const found = disallowedOperator(item)
      if (found) return found
    }
    return undefined
  }
  if (typeof filter !== 'object' || filter === null || filter instanceof Date || filter instanceof RegExp) return undefined
  for (const [key, value] of Object.entries(filter)) {
    if (key.startsWith('$') && !ALLOWED_FILTER_OPERATORS.has(key)) return key
    const found = disallowedOperator(value)
    if (found) return found
  }
  return undefined
}

/** The longest pattern a `$regex` may have: a short pattern bounds what one match can cost. */
export const MAX_REGEX_LENGTH = 256

export interface RegexProblem {
  /** Where the refused `$regex` sits, from `path` down (`filter.businessKey`). */
  path: string
  problem: string
}

function objectProblem(filter: Record<string, unknown>, path: string): RegexProblem | undefined {
  if ('$regex' in filter) {
    const { $regex: pattern, $options: options } = filter
    if (typeof pattern !== 'string') return { path, problem: '$regex must be a string' }
    if (pattern.length > MAX_REGEX_LENGTH) return { path, problem: `$regex is longer than ${MAX_REGEX_LENGTH} characters` }
    if (options !== undefined && typeof options !== 'string') return { path, problem: '$options must be a string' }
    const problem = mongoRegexProblem(pattern, options)
    if (problem) return { path, problem: `$regex cannot run in linear time (RE2): ${problem}` }
  } else if ('$options' in filter) {
    return { path, problem: '$options needs a $regex beside it' }
  }
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$regex' || key === '$options') continue
    const found = regexProblem(value, `${path}.${key}`)
    if (found) return found
  }
  return undefined
}

/**
 * The first `$regex` of `filter` (at any depth) that is refused — not text, too long, options RE2
 * has no counterpart for, or a pattern RE2 cannot run — with the path of the field it applies to;
 * undefined when none is.
 */
export function regexProblem(filter: unknown, path = 'filter'): RegexProblem | undefined {
  if (Array.isArray(filter)) {
    for (const [index, item] of filter.entries()) {
      const found = regexProblem(item, `${path}[${index}]`)
      if (found) return found
    }
    return undefined
  }
  if (typeof filter !== 'object' || filter === null || filter instanceof Date || filter instanceof RegExp) return undefined
  return objectProblem(filter as Record<string, unknown>, path)
}

/** Why a filter is refused: the field it names (`body.filter.days.$gt`) and what is wrong there. */
export interface FilterProblem {
  field: string
  message: string
  /** Set when the problem is an operator outside the allow-list. */
  operator?: string
}

const LOGICAL_OPERATORS: ReadonlySet<string> = new Set(['$and', '$or', '$nor'])

/** The operand each field operator takes; `$options` goes with `$regex`. */
const FIELD_OPERAND: Readonly<Record<string, (value: unknown) => string | undefined>> = {
  $eq: () => undefined,
  $ne: () => undefined,
  $gt: () => undefined,
  $gte: () => undefined,
  $lt: () => undefined,
  $lte: () => undefined,
  $in: (value) => (Array.isArray(value) ? undefined : 'must be an array'),
  $nin: (value) => (Array.isArray(value) ? undefined : 'must be an array'),
  $exists: (value) => (typeof value === 'boolean' || typeof value === 'number' ? undefined : 'must be a boolean'),
  $regex: (value) => (typeof value === 'string' ? undefined : 'must be a string'),
  $options: (value) => (typeof value === 'string' ? undefined : 'must be a string'),
  $size: (value) => (Number.isInteger(value) && (value as number) >= 0 ? undefined : 'must be a non-negative integer'),
  $not: (value) =>
    isPlainObject(value) && Object.keys(value).length > 0 && Object.keys(value).every((key) => key.startsWith('$'))
      ? undefined
      : 'must be an object of operators',
  $elemMatch: (value) => (isPlainObject(value) ? undefined : 'must be an object'),
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date) && !(value instanceof RegExp)
}

/** A value whose keys are all operators (`{ $gt: 5 }`) rather than an embedded document to equal. */
function isOperatorObject(value: unknown): value is Record<string, unknown> {
  return isPlainObject(value) && Object.keys(value).some((key) => key.startsWith('$'))
}

type Pending = { kind: 'query' | 'operators'; value: unknown; field: string }

/**
 * The first structural fault of a query filter from outside (a data search), or undefined: the
 * filter and every `$and`/`$or`/`$nor` member is an object of field conditions and logical
 * operators; a field condition is a value to equal or an object of allow-listed field operators,
 * each with the operand it takes. Walked with an explicit stack (no recursion on the input), so any
 * nesting is checked in constant stack space. Regex patterns are checked apart (`regexProblem`).
 */
export function filterProblem(filter: unknown, root = 'body.filter'): FilterProblem | undefined {
  const pending: Pending[] = [{ kind: 'query', value: filter, field: root }]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const { kind, value, field } = next
    if (!isPlainObject(value)) return { field, message: `${field} must be an object` }
    const keys = Object.keys(value)
    if (kind === 'operators' && keys.some((key) => !key.startsWith('$'))) {
      return { field, message: `${field} mixes operators and fields` }
    }
    for (const key of keys) {
      const operand = value[key]
      const at = `${field}.${key}`
      if (kind === 'query') {
        if (LOGICAL_OPERATORS.has(key)) {
          if (!Array.isArray(operand) || operand.length === 0)
            return { field: at, message: `${at} must be a non-empty array of conditions` }
          operand.forEach((member, index) => pending.push({ kind: 'query', value: member, field: `${at}[${index}]` }))
        } else if (key.startsWith('$')) {
          if (!ALLOWED_FILTER_OPERATORS.has(key)) return { field: at, message: `${at}: operator not allowed`, operator: key }
          return { field: at, message: `${at}: ${key} applies to a field, not to the whole filter` }
        } else if (isOperatorObject(operand)) {
          pending.push({ kind: 'operators', value: operand, field: at })
        }
      } else {
        const check = FIELD_OPERAND[key]
        if (check === undefined) {
          if (!ALLOWED_FILTER_OPERATORS.has(key) || LOGICAL_OPERATORS.has(key))
            return { field: at, message: `${at}: operator not allowed on a field`, operator: key }
          return { field: at, message: `${at}: operator not allowed on a field` }
        }
        const problem = check(operand)
        if (problem) return { field: at, message: `${at} ${problem}` }
        if (key === '$options' && !Object.hasOwn(value, '$regex')) return { field: at, message: `${at} goes only with $regex` }
        if (key === '$not') pending.push({ kind: 'operators', value: operand, field: at })
        if (key === '$elemMatch') pending.push({ kind: isOperatorObject(operand) ? 'operators' : 'query', value: operand, field: at })
      }
    }
  }
  return undefined
}

/**
 * Bounds on a filter from outside and on the work of the search it drives (docs/security.md
 * "Budgets"): the embedded store tests filters on the engine's thread, so a filter's size times the
 * documents it is tested on is time every other tenant waits.
 */
export interface DataLimits {
  /** DATA_FILTER_MAX_CONDITIONS: field and operator entries, members of `$in`/`$nin` lists included. */
  maxConditions: number
  /** DATA_FILTER_MAX_REGEXES: `$regex` operators. */
  maxRegexes: number
  /** DATA_FILTER_MAX_BYTES: the filter's JSON text. */
  maxFilterBytes: number
  /** DATA_SEARCH_MAX_TESTS: documents examined times the filter's cost (conditions, a `$regex` counting ten). */
  maxSearchTests: number
}

export const DEFAULT_DATA_LIMITS: DataLimits = { maxConditions: 200, maxRegexes: 10, maxFilterBytes: 16_384, maxSearchTests: 50_000 }

/** What a `$regex` costs against a plain comparison when the search's work is counted. */
const REGEX_WEIGHT = 10

/** A bound a filter or a search went past: the variable that sets it, and what went past. */
export interface LimitProblem {
  limit: string
  message: string
}

const NOT_CONDITIONS: ReadonlySet<string> = new Set(['$and', '$or', '$nor', '$options'])
const LISTS: ReadonlySet<string> = new Set(['$in', '$nin'])

/** How many conditions and `$regex`es a filter holds (walked with an explicit stack: any nesting in constant stack space). */
export function filterSize(filter: unknown): { conditions: number; regexes: number } {
  let conditions = 0
  let regexes = 0
  const pending: unknown[] = [filter]
  while (pending.length > 0) {
    const value = pending.pop()
    if (Array.isArray(value)) pending.push(...value)
    else if (isPlainObject(value)) {
      for (const [key, operand] of Object.entries(value)) {
        if (!NOT_CONDITIONS.has(key)) conditions += LISTS.has(key) && Array.isArray(operand) ? Math.max(1, operand.length) : 1
        if (key === '$regex') regexes++
        if (!LISTS.has(key)) pending.push(operand)
      }
    }
  }
  return { conditions, regexes }
}

/** The first bound of `limits` the filter goes past, or undefined. */
export function filterLimitProblem(filter: unknown, limits: DataLimits): LimitProblem | undefined {
  const bytes = Buffer.byteLength(JSON.stringify(filter) ?? '')
  if (bytes > limits.maxFilterBytes)
    return { limit: 'DATA_FILTER_MAX_BYTES', message: `the filter has ${bytes} bytes of JSON, more than ${limits.maxFilterBytes}` }
  const { conditions, regexes } = filterSize(filter)
  if (conditions > limits.maxConditions)
    return { limit: 'DATA_FILTER_MAX_CONDITIONS', message: `the filter has ${conditions} conditions, more than ${limits.maxConditions}` }
  if (regexes > limits.maxRegexes)
    return { limit: 'DATA_FILTER_MAX_REGEXES', message: `the filter has ${regexes} $regex operators, more than ${limits.maxRegexes}` }
  return undefined
}

/** How many documents a search with `filter` may examine (ScanOptions.maxExamined): DATA_SEARCH_MAX_TESTS over the filter's cost. */
export function examinedBudget(filter: unknown, limits: DataLimits): number {
  const { conditions, regexes } = filterSize(filter)
  const cost = Math.max(1, conditions - regexes + regexes * REGEX_WEIGHT)
  return Math.max(1, Math.floor(limits.maxSearchTests / cost))
}

/** The problem of a search that ran out of its budget of work. */
export function searchBudgetProblem(maxExamined: number, limits: DataLimits): LimitProblem {
  return {
    limit: 'DATA_SEARCH_MAX_TESTS',
    message:
      `the search would test the filter on more than ${maxExamined} documents (${limits.maxSearchTests} condition tests): ` +
      'narrow it with indexed fields',
  }
}
