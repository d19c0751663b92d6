/**
 * Picks the documents a filter has to be tested against. An equality or `$in` of plain values on
 * `_id`, or on a prefix of an index's fields (of a partial index only when the filter keeps to the
 * documents it holds), optionally followed by a range (`$gt/$gte/$lt/$lte`, or an `$elemMatch` of
 * them) on the next field, narrows them to that part of the index; the plan with the fewest ids
 * wins. Otherwise every document is a candidate. The filter itself is always checked afterwards, so
 * a plan only has to return a superset of the matches.
 */
import type { Document, Filter } from '../port.js'
import { isScalar, keyOf } from './index-keys.js'
import { rangeTag } from './ordered-keys.js'
import type { IndexBounds, RangeCondition, SecondaryIndex } from './secondary-index.js'

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

const LOWER = new Set(['$gt', '$gte'])
const UPPER = new Set(['$lt', '$lte'])

/** The operators of a condition object (not a value: an array, a Date), or undefined. */
function operatorsOf(condition: unknown): Record<string, unknown> | undefined {
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition) || condition instanceof Date) return undefined
  return condition as Record<string, unknown>
}

/**
 * The range a field condition's `$gt/$gte/$lt/$lte` on plain values put on the field, if any; or
 * those of an `$elemMatch` of nothing else, which one array element must meet together.
 */
function rangeOf(condition: unknown): RangeCondition | undefined {
  const operators = operatorsOf(condition)
  if (!operators) return undefined
  const elementwise = operatorsOf(operators.$elemMatch)
  if (elementwise && Object.keys(operators).length === 1 && Object.keys(elementwise).every((name) => LOWER.has(name) || UPPER.has(name))) {
    const range = boundsOf(elementwise)
    return range && { ...range, sameElement: true }
  }
  return boundsOf(operators)
}

function boundsOf(condition: Record<string, unknown>): RangeCondition | undefined {
  let range: RangeCondition | undefined
  for (const [operator, operand] of Object.entries(condition)) {
    const lower = LOWER.has(operator)
    if (!lower && !UPPER.has(operator)) continue
    const tag = rangeTag(operand)
    // Bounds of two kinds cannot both hold: either one alone is a valid superset.
    if (tag === undefined || (range && range.tag !== tag)) continue
    range ??= { tag }
    const inclusive = operator.endsWith('e')
    if (lower) range.lower = { value: operand, inclusive }
    else range.upper = { value: operand, inclusive }
  }
  return range
}

interface Conditions {
  pinned: Map<string, unknown[]>
  ranges: Map<string, RangeCondition>
}

function collectConditions(filter: Filter, into: Conditions): void {
  for (const [field, condition] of Object.entries(filter)) {
    if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) collectConditions(clause as Filter, into)
      continue
    }
    if (field.startsWith('$')) continue
    const values = pinnedValues(condition)
    // The same field pinned twice (e.g. top level and inside $and): either list is a valid superset.
    if (values && (!into.pinned.has(field) || values.length < (into.pinned.get(field) as unknown[]).length)) into.pinned.set(field, values)
    const range = values ? undefined : rangeOf(condition)
    if (range) into.ranges.set(field, range)
  }
}

export interface PlanSource {
  docs: ReadonlyMap<string, Document>
  indexes: Iterable<SecondaryIndex>
}

/** How much of an index a plan pins: more pinned fields, then a range, read less. */
function narrowness(bounds: IndexBounds): number {
  return bounds.fields * 2 + (bounds.range ? 1 : 0)
}

/** The conditions of the filter a plan can use; undefined when there are none (every document is a candidate). */
function conditionsOf(filter: Filter): Conditions | undefined {
  const conditions: Conditions = { pinned: new Map(), ranges: new Map() }
  collectConditions(filter, conditions)
  return conditions.pinned.size === 0 && conditions.ranges.size === 0 ? undefined : conditions
}

/**
 * Does the filter pin `_id`, or every field of one of these unique indexes, to plain values (so each
 * value it allows reaches at most one document through them)? Such a read is planned on those
 * indexes alone: the others would narrow it no further.
 */
export function pinnedByUnique(filter: Filter, uniqueIndexes: readonly SecondaryIndex[]): boolean {
  const conditions = conditionsOf(filter)
  if (!conditions) return false
  const { pinned } = conditions
  if (pinned.has('_id')) return true
  return uniqueIndexes.some((index) => index.usableFor(pinned) && index.fields.every((field) => pinned.has(field)))
}

/**
 * The candidates: by `_id` when it is pinned, else from the index whose pinned prefix (and range on
 * the next field) yields the fewest ids, else every document.
 */
export function candidates(filter: Filter, source: PlanSource): Iterable<Document> {
  // The most frequent lookup of all, by one `_id`, needs no plan: it is that document or none.
  const id = filter._id
  if (isScalar(id)) {
    const doc = source.docs.get(keyOf(id))
    return doc ? [doc] : []
  }
  const conditions = conditionsOf(filter)
  if (!conditions) return source.docs.values()

  let best: string[] | undefined
  const idValues = conditions.pinned.get('_id')
  if (idValues) best = idValues.map(keyOf)
  const plans: Array<{ index: SecondaryIndex; bounds: IndexBounds }> = []
  for (const index of source.indexes) {
    const bounds = index.usableFor(conditions.pinned) ? index.boundsFor(conditions.pinned, conditions.ranges) : undefined
    if (bounds) plans.push({ index, bounds })
  }
  // The most specific plans first, so that the others can stop reading once they are no better.
  plans.sort((a, b) => narrowness(b.bounds) - narrowness(a.bounds))
  for (const { index, bounds } of plans) {
    const ids = index.idsWithin(bounds, best ? best.length : Infinity)
    if (!best || ids.length < best.length) best = ids
    if (best.length === 0) break
  }
  if (!best) return source.docs.values()

  const found: Document[] = []
  for (const id of new Set(best)) {
    const doc = source.docs.get(id)
    if (doc) found.push(doc)
  }
  return found
}

/**
 * How to find a filter's candidates among documents that are not in memory (the cold tier): by
 * their `_id` keys, by key ranges of one index among those `holdsCold` accepts (the narrowest the
 * filter bounds, as `index.boundsFor` gives them with `holdsArrays` saying which of its fields hold
 * an array there), or by reading them all.
 */
export type ColdPlan =
  { ids: string[] } | { index: SecondaryIndex; ranges: Array<{ from: string; to: string }>; bounds?: IndexBounds } | { scan: true }

export function coldPlan(
  filter: Filter,
  indexes: Iterable<SecondaryIndex>,
  holdsArrays: (index: SecondaryIndex, field: number) => boolean,
  holdsCold: (index: SecondaryIndex) => boolean,
): ColdPlan {
  const id = filter._id
  if (isScalar(id)) return { ids: [keyOf(id)] }
  const conditions = conditionsOf(filter)
  if (!conditions) return { scan: true }
  const idValues = conditions.pinned.get('_id')
  if (idValues) return { ids: [...new Set(idValues.map(keyOf))] }
  let best: { index: SecondaryIndex; bounds: IndexBounds } | undefined
  for (const index of indexes) {
    if (!holdsCold(index)) continue
    const bounds = index.usableFor(conditions.pinned)
      ? index.boundsFor(conditions.pinned, conditions.ranges, undefined, (field) => holdsArrays(index, field))
      : undefined
    if (bounds && (!best || narrowness(bounds) > narrowness(best.bounds))) best = { index, bounds }
  }
  if (!best) return { scan: true }
  return { index: best.index, ranges: best.index.rangesOf(best.bounds), bounds: best.bounds }
}
