/**
 * Picks the documents a filter has to be tested against. An equality or `$in` of plain values on
 * `_id` or on the first field of a (non-partial) index narrows them to the index's buckets; the
 * narrowest such field wins. Otherwise every document is a candidate. The filter itself is always
 * checked afterwards, so a plan only has to return a superset of the matches.
 */
import type { Document, Filter } from '../port.js'
import { isScalar, keyOf } from './index-keys.js'
import type { SecondaryIndex } from './secondary-index.js'

/** The plain values a field condition pins the field to, or undefined when it does not pin it. */
function pinnedValues(condition: unknown): unknown[] | undefined {
  if (isScalar(condition)) return [condition]
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return undefined
  const operators = condition as Record<string, unknown>
  if ('$eq' in operators && isScalar(operators.$eq)) return [operators.$eq]
  const inList = operators.$in
  if (Array.isArray(inList) && inList.every(isScalar)) return inList
  return undefined
}

function collectPinnedFields(filter: Filter, into: Map<string, unknown[]>): void {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) collectPinnedFields(clause as Filter, into)
      continue
    }
    if (field.startsWith('$')) continue
    const values = pinnedValues(condition)
    // The same field pinned twice (e.g. top level and inside $and): either list is a valid superset.
    if (values && (!into.has(field) || values.length < (into.get(field) as unknown[]).length)) into.set(field, values)
  }
}

export interface PlanSource {
  docs: ReadonlyMap<string, Document>
  indexes: Iterable<SecondaryIndex>
}

export function candidates(filter: Filter, source: PlanSource): Iterable<Document> {
  const pinned = new Map<string, unknown[]>()
  collectPinnedFields(filter, pinned)
  if (pinned.size === 0) return source.docs.values()

  let best: string[] | undefined
  const idValues = pinned.get('_id')
  if (idValues) best = idValues.map(keyOf)
  for (const index of source.indexes) {
    const values = index.usableForQueries ? pinned.get(index.firstField) : undefined
    if (!values) continue
    const ids: string[] = []
    for (const value of values) {
      const bucket = index.idsWithFirstFieldKey(keyOf(value))
      if (bucket) for (const id of bucket) ids.push(id)
      if (best && ids.length >= best.length) break
    }
    if (!best || ids.length < best.length) best = ids
  }
  if (!best) return source.docs.values()

  const found: Document[] = []
  for (const id of new Set(best)) {
    const doc = source.docs.get(id)
    if (doc) found.push(doc)
  }
  return found
}
