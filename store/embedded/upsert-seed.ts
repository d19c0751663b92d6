/**
 * The document an upsert starts from when nothing matched: MongoDB copies the filter's equality
 * conditions (`{a: 1}`, `{'b.c': 2}`, `{d: {$eq: 3}}`, also inside `$and`) into it before applying
 * the update operators.
 */
import { setValue } from 'mingo/util'
import type { Document, Filter } from '../port.js'

function isOperatorObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value) || value instanceof Date || value instanceof RegExp) {
    return false
  }
  const keys = Object.keys(value)
  return keys.length > 0 && keys.every((key) => key.startsWith('$'))
}

function collectEqualities(filter: Filter, into: Array<[string, unknown]>): void {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) collectEqualities(clause as Filter, into)
    } else if (field.startsWith('$') || condition instanceof RegExp) {
      continue
    } else if (isOperatorObject(condition)) {
      if ('$eq' in condition) into.push([field, condition.$eq])
    } else {
      into.push([field, condition])
    }
  }
}

export function upsertSeed(filter: Filter): Document {
  const equalities: Array<[string, unknown]> = []
  collectEqualities(filter, equalities)
  const seed: Document = {}
  for (const [path, value] of equalities) setValue(seed, path, structuredClone(value))
  return seed
}
