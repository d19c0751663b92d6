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

/** Why a `$regex` of `filter` (at any depth) is refused — not text, too long, bad options — or undefined when none is. */
export function regexProblem(filter: unknown): string | undefined {
  if (Array.isArray(filter)) {
    for (const item of filter) {
      const found = regexProblem(item)
      if (found) return found
    }
    return undefined
  }
  if (typeof filter !== 'object' || filter === null || filter instanceof Date || filter instanceof RegExp) return undefined
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$regex') {
      if (typeof value !== 'string') return '$regex must be a string'
      if (value.length > MAX_REGEX_LENGTH) return `$regex is longer than ${MAX_REGEX_LENGTH} characters`
    } else if (key === '$options') {
      if (typeof value !== 'string' || !/^[imsx]*$/.test(value)) return '$options may only hold the flags i, m, s and x'
    } else {
      const found = regexProblem(value)
      if (found) return found
    }
  }
  return undefined
}
