/**
 * mingo compiles a query or an update anew on every call, and that costs far more (tens of µs) than
 * the rest of a write. The service's hot writes are compare-and-sets, `{_id, version}` →
 * `$set`/`$inc`, so those two shapes are handled here directly, with MongoDB's semantics; anything
 * else, or anything unusual about these (arrays on an updated path, non-numbers under `$inc`,
 * overlapping paths), returns undefined and goes to mingo. fast-paths.test.ts checks both agree.
 */
import { cloneDocument } from './document-codec.js'
import { compare, isEqual, typeOf } from 'mingo/util'
import type { Document, Filter, UpdateFilter } from '../port.js'
import { isScalar, type ScalarValue, valuesAtPath } from './index-keys.js'

/** No empty segment and none starting with `$`: nothing of that kind at the start, after a dot, or at the end. */
const UNUSUAL_SEGMENT = /(?:^|\.)(?:\$|\.|$)/

function isPlainPath(path: string): boolean {
  return !UNUSUAL_SEGMENT.test(path)
}

function sameScalar(value: unknown, expected: ScalarValue): boolean {
  if (expected instanceof Date) return value instanceof Date && value.getTime() === expected.getTime()
  return value === expected
}

type Matcher = (doc: Document) => boolean

/** A scalar a fast path can compare with: NaN and invalid Dates order oddly in mingo, so they go there. */
function isComparable(value: unknown): value is ScalarValue {
  if (!isScalar(value)) return false
  if (typeof value === 'number') return !Number.isNaN(value)
  return !(value instanceof Date) || !Number.isNaN(value.getTime())
}

/** Does some value at the path, or an element of an array there, satisfy `test`? (MongoDB's implicit array matching.) */
function anyValueAt(doc: Document, path: string, test: (value: unknown) => boolean): boolean {
  // A top-level field (most lookups: `_id`, `version`, `userId`) holds one value or an array: no path walk.
  if (!path.includes('.')) {
    if (!Object.hasOwn(doc, path)) return false
    const value = doc[path]
    return Array.isArray(value) ? value.some(test) : test(value)
  }
  for (const value of valuesAtPath(doc, path)) if (Array.isArray(value) ? value.some(test) : test(value)) return true
  return false
}

/**
 * The matcher of a test of the values at a path. Matchers and their tests are made once per filter,
 * never per document: a find over 20,000 documents would otherwise make closures by the hundred
 * thousand (4 MB of a 23 MB answer's garbage, in `processIdsUpdatedBetween`).
 */
function valuesMatching(path: string, test: (value: unknown) => boolean): Matcher {
  return (doc) => anyValueAt(doc, path, test)
}

function allOf(matchers: readonly Matcher[]): Matcher {
  return (doc) => {
    for (const matcher of matchers) if (!matcher(doc)) return false
    return true
  }
}

function anyOf(matchers: readonly Matcher[]): Matcher {
  return (doc) => {
    for (const matcher of matchers) if (matcher(doc)) return true
    return false
  }
}

/** mingo compares only values of the same type (a Date with a Date, a string with a string). */
const RANGE_OPERATORS: Record<string, (order: number) => boolean> = {
  $gt: (order) => order > 0,
  $gte: (order) => order >= 0,
  $lt: (order) => order < 0,
  $lte: (order) => order <= 0,
}

/** One operator of a field condition (`$eq`, `$in`, `$nin`, a range) on plain values, else undefined. */
function operatorMatcher(path: string, operator: string, operand: unknown): Matcher | undefined {
  if (operator === '$eq') return isComparable(operand) ? valuesMatching(path, (value) => sameScalar(value, operand)) : undefined
  if (operator === '$in' || operator === '$nin') {
    if (!Array.isArray(operand) || !operand.every(isComparable)) return undefined
    const list = operand as ScalarValue[]
    const holdsOne = valuesMatching(path, (value) => list.some((expected) => sameScalar(value, expected)))
    // `$nin` is `$in` negated, as in MongoDB: a document without the field matches it too.
    return operator === '$in' ? holdsOne : (doc) => !holdsOne(doc)
  }
  const holds = RANGE_OPERATORS[operator]
  if (!holds || !isComparable(operand)) return undefined
  if (operand instanceof Date) return dateRangeMatcher(path, holds, operand)
  const type = typeOf(operand)
  return valuesMatching(path, (value) => typeOf(value) === type && holds(compare(value, operand)))
}

/**
 * A range on a Date (the usual one: `lastUpdate` between two times) compares times, as mingo does
 * (an invalid Date's NaN is neither before nor after), without its type dispatch per value.
 */
function dateRangeMatcher(path: string, holds: (order: number) => boolean, operand: Date): Matcher {
  const time = operand.getTime()
  return valuesMatching(path, (value) => {
    if (!(value instanceof Date)) return false
    const valueTime = value.getTime()
    return holds(valueTime < time ? -1 : valueTime > time ? 1 : 0)
  })
}

/** A field's condition: a plain value (equality) or an object of the operators above only. */
function conditionMatcher(path: string, condition: unknown): Matcher | undefined {
  if (isComparable(condition)) return valuesMatching(path, (value) => sameScalar(value, condition))
  if (!isPlainObject(condition)) return undefined
  const operators = Object.entries(condition)
  if (operators.length === 0) return undefined
  const matchers: Matcher[] = []
  for (const [operator, operand] of operators) {
    const matcher = operatorMatcher(path, operator, operand)
    if (!matcher) return undefined
    matchers.push(matcher)
  }
  // Each operator may be met by a different array element, as in MongoDB (no $elemMatch here).
  return matchers.length === 1 ? (matchers[0] as Matcher) : allOf(matchers)
}

/**
 * A matcher for filters built only of `{path: plain value}`, `$eq`, `$in` and `$nin` of plain values, the
 * ranges `$gt/$gte/$lt/$lte` on a plain value, and `$and`/`$or` of such filters; else undefined.
 * These are the shapes of the hot lookups (lock holders and claims, model versions, swimlane
 * members), which would otherwise compile a mingo query per call.
 */
export function simpleFilterMatcher(filter: Filter): Matcher | undefined {
  const matchers: Matcher[] = []
  for (const [key, condition] of Object.entries(filter)) {
    let matcher: Matcher | undefined
    if (key === '$and' || key === '$or') {
      if (!Array.isArray(condition) || condition.length === 0) return undefined
      const clauses: Matcher[] = []
      for (const clause of condition) {
        const clauseMatcher = isPlainObject(clause) ? simpleFilterMatcher(clause as Filter) : undefined
        if (!clauseMatcher) return undefined
        clauses.push(clauseMatcher)
      }
      matcher = key === '$and' ? allOf(clauses) : anyOf(clauses)
    } else if (isPlainPath(key)) {
      matcher = conditionMatcher(key, condition)
    }
    if (!matcher) return undefined
    matchers.push(matcher)
  }
  return allOf(matchers)
}

function isPlainObject(value: unknown): value is Document {
  if (typeof value !== 'object' || value === null) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** May this path be updated here: plain segments through plain objects (or missing ones)? */
function reachable(doc: Document, segments: readonly string[]): boolean {
  let current: unknown = doc
  for (let i = 0; i < segments.length - 1; i++) {
    if (current === undefined) return true
    if (!isPlainObject(current)) return false
    current = current[segments[i] as string]
  }
  return current === undefined || isPlainObject(current)
}

const SIMPLE_OPERATORS = new Set(['$set', '$unset', '$inc'])
const DOLLAR = 0x24

/**
 * Applies `$set`/`$unset`/`$inc` when every path is simple, without touching `doc`: the result copies
 * only the objects along the updated paths and shares everything else with `doc`. Stored documents
 * are never mutated, so the sharing is safe, and it spares a deep copy of the whole document on every
 * write. Returns the changed paths (none: nothing changed), or undefined when mingo must do it.
 */
export function simpleUpdate(doc: Document, update: UpdateFilter): { after: Document; changed: string[] } | undefined {
  const steps: Array<{ op: string; path: string; segments: readonly string[]; value: unknown }> = []
  let nested = false
  for (const op of Object.keys(update)) {
    const fields = update[op]
    if (!SIMPLE_OPERATORS.has(op) || !isPlainObject(fields)) return undefined
    for (const path of Object.keys(fields)) {
      // A compare-and-set names top-level fields only: those need no split and no check of the segments' parents.
      const topLevel = path.length > 0 && path.charCodeAt(0) !== DOLLAR && !path.includes('.')
      if (!topLevel && !isPlainPath(path)) return undefined
      nested ||= !topLevel
      steps.push({ op, path, segments: topLevel ? [path] : path.split('.'), value: fields[path] })
    }
  }
  // Overlapping paths ('a' and 'a.b', or one path under two operators) are a conflict MongoDB
  // reports: leave that to mingo.
  const paths = new Set(steps.map((step) => step.path))
  if (paths.size < steps.length) return undefined
  if (nested) {
    for (const { segments } of steps) {
      for (let length = 1; length < segments.length; length++) {
        if (paths.has(segments.slice(0, length).join('.'))) return undefined
      }
    }
  }
  for (const step of steps) {
    if (step.segments.length > 1 && !reachable(doc, step.segments)) return undefined
    if (step.op === '$inc') {
      const current = valuesAtPath(doc, step.path)[0]
      if (typeof step.value !== 'number' || (current !== undefined && typeof current !== 'number')) return undefined
    }
  }

  const after: Document = { ...doc }
  const copies = new Set<Document>([after])
  /** The object in `after` holding the path's last segment, copied (or created) on the way down. */
  const writableParent = (segments: readonly string[], create: boolean): Document | undefined => {
    let current = after
    for (let i = 0; i < segments.length - 1; i++) {
      const segment = segments[i] as string
      const next = current[segment] as Document | undefined
      if (next === undefined && !create) return undefined
      const writable = next === undefined ? {} : copies.has(next) ? next : { ...next }
      copies.add(writable)
      current[segment] = writable
      current = writable
    }
    return current
  }

  const changed: string[] = []
  for (const { op, path, segments, value } of steps) {
    const key = segments[segments.length - 1] as string
    if (op === '$unset') {
      const parent = writableParent(segments, false)
      if (parent && Object.hasOwn(parent, key)) {
        delete parent[key]
        changed.push(path)
      }
      continue
    }
    const parent = writableParent(segments, true) as Document
    const current = parent[key]
    const next = op === '$inc' ? ((current as number | undefined) ?? 0) + (value as number) : value
    if (Object.hasOwn(parent, key) && isEqual(current, next)) continue
    parent[key] = cloneDocument(next)
    changed.push(path)
  }
  return { after, changed }
}

/** One level of the included paths, by name: each field, and what is kept of it (null: all of it). */
interface IncludedLevel {
  readonly names: readonly string[]
  readonly under: ReadonlyArray<IncludedLevel | null>
}

type PathTree = Map<string, PathTree | null>

/** The paths' fields level by level, each level by name (the order mingo gives). */
function includedLevels(paths: readonly string[][]): IncludedLevel {
  const root: PathTree = new Map()
  for (const segments of paths) {
    let node = root
    segments.forEach((segment, i) => {
      if (i === segments.length - 1) return void node.set(segment, null)
      let child = node.get(segment)
      if (!child) node.set(segment, (child = new Map()))
      node = child
    })
  }
  const level = (tree: PathTree): IncludedLevel => {
    const names = [...tree.keys()].sort()
    return { names, under: names.map((name) => tree.get(name) ?? null).map((under) => under && level(under)) }
  }
  return level(root)
}

/** Not handled here: the projector hands the document back to mingo. */
const LEFT_TO_MINGO = Symbol('left to mingo')

/**
 * The fields of `level` copied from `source`, in its order. A field on the way that holds a plain
 * object is kept with what is under it (an empty object when none of it is there, as mingo and
 * MongoDB keep it); one that holds an array keeps, of each element, what the rest of the paths
 * select (arrays within it likewise), as both do for arrays of documents. A scalar, null or Date
 * on the way, or in such an array, is left to mingo.
 */
function projectFields(source: Document, level: IncludedLevel): Document | typeof LEFT_TO_MINGO {
  const out: Document = {}
  const { names, under } = level
  for (let i = 0; i < names.length; i++) {
    const field = names[i] as string
    if (!Object.hasOwn(source, field)) continue
    const value = source[field]
    if (value === undefined) continue
    const kept = under[i]
    if (!kept) {
      out[field] = typeof value === 'object' && value !== null ? cloneDocument(value) : value
      continue
    }
    const projected = projectUnder(value, kept)
    if (projected === LEFT_TO_MINGO) return LEFT_TO_MINGO
    out[field] = projected
  }
  return out
}

function projectUnder(value: unknown, level: IncludedLevel): unknown {
  if (isPlainObject(value)) return projectFields(value, level)
  if (!Array.isArray(value)) return LEFT_TO_MINGO
  const items: unknown[] = new Array(value.length)
  for (let i = 0; i < value.length; i++) {
    const projected = projectUnder(value[i], level)
    if (projected === LEFT_TO_MINGO) return LEFT_TO_MINGO
    items[i] = projected
  }
  return items
}

/**
 * Projections that include plain fields and dotted paths through plain objects and arrays of them
 * (plus `_id: 0`), or exclude top-level fields only, applied without mingo, which compiles a query
 * per call. Returns undefined for any other projection, and the projector returns undefined for a
 * document with a scalar, null or Date on an included dotted path (mingo's rules there are its
 * own). The result shares no object with `doc`: it is what a find hands out, copied once.
 */
export function simpleProjector(projection: Record<string, unknown>): ((doc: Document) => Document | undefined) | undefined {
  const included: string[] = []
  const excluded: string[] = []
  for (const [field, flag] of Object.entries(projection)) {
    if (!isPlainPath(field)) return undefined
    if (flag === 1 || flag === true) included.push(field)
    else if (flag === 0 || flag === false) excluded.push(field)
    else return undefined
  }
  if (included.length > 0) {
    if (excluded.some((field) => field !== '_id')) return undefined
    // Overlapping paths ('a' and 'a.b', or a path into `_id`, which is kept whole unless excluded) are left to mingo.
    const overlapping = (field: string) => field.startsWith('_id.') || included.some((other) => other.startsWith(`${field}.`))
    if (included.some(overlapping)) return undefined
    // The order mingo gives: an explicit `_id` first, then the fields by name at every level, an implicit `_id` last.
    const fields = includedLevels(included.filter((field) => field !== '_id').map((field) => field.split('.')))
    const id = included.includes('_id') ? 'first' : excluded.includes('_id') ? 'none' : 'last'
    const level: IncludedLevel = {
      first: { names: ['_id', ...fields.names], under: [null, ...fields.under] },
      none: fields,
      last: { names: [...fields.names, '_id'], under: [...fields.under, null] },
    }[id]
    return (doc) => {
      const out = projectFields(doc, level)
      return out === LEFT_TO_MINGO ? undefined : out
    }
  }
  if (excluded.some((field) => field.includes('.'))) return undefined
  return (doc) => {
    const out: Document = { ...doc }
    for (const field of excluded) delete out[field]
    return cloneDocument(out)
  }
}
