import { mongoRegexProblem } from '../../../plugins/store/regex.js'

/**
 * The query operators a filter that comes from outside (a flow function's `data` node, a data
 * search) may use (DESIGN.md §6): comparisons and logic only, nothing that runs code or reaches
 * other collections.
 */
export const ALLOWED_FILTER_OPERATORS: ReadonlySet<string> = new Set([
  '$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$and', '$or', '$nor', '$not', '$exists', '$regex', '$options', '$elemMatch', '$size',
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
