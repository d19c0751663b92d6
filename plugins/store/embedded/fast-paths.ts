/**
 * mingo compiles a query or an update anew on every call, and that costs far more (tens of µs) than
 * the rest of a write. The service's hot writes are compare-and-sets, `{_id, version}` →
 * `$set`/`$inc`, so those two shapes are handled here directly, with MongoDB's semantics; anything
 * else, or anything unusual about these (arrays on an updated path, non-numbers under `$inc`,
 * overlapping paths), returns undefined and goes to mingo. fast-paths.test.ts checks both agree.
 */
import { isEqual } from 'mingo/util'
import type { Document, Filter, UpdateFilter } from '../port.js'
import { isScalar, type ScalarValue, valuesAtPath } from './index-keys.js'

function isPlainPath(path: string): boolean {
  return path.split('.').every((segment) => segment.length > 0 && !segment.startsWith('$'))
}

function sameScalar(value: unknown, expected: ScalarValue): boolean {
  if (expected instanceof Date) return value instanceof Date && value.getTime() === expected.getTime()
  return value === expected
}

/** A matcher for filters that are only `{path: plain value}` pairs, else undefined. */
export function simpleFilterMatcher(filter: Filter): ((doc: Document) => boolean) | undefined {
  const conditions = Object.entries(filter)
  for (const [path, value] of conditions) {
    if (!isPlainPath(path) || !isScalar(value) || Number.isNaN(value)) return undefined
  }
  const pinned = conditions as Array<[string, ScalarValue]>
  // Equality holds when a value at the path is the value, or an array there holds it.
  return (doc) =>
    pinned.every(([path, expected]) =>
      valuesAtPath(doc, path).some((value) =>
        Array.isArray(value) ? value.some((element) => sameScalar(element, expected)) : sameScalar(value, expected),
      ),
    )
}

function isPlainObject(value: unknown): value is Document {
  if (typeof value !== 'object' || value === null) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** May this path be updated here: plain segments through plain objects (or missing ones)? */
function reachable(doc: Document, segments: string[]): boolean {
  let current: unknown = doc
  for (const segment of segments.slice(0, -1)) {
    if (current === undefined) return true
    if (!isPlainObject(current)) return false
    current = current[segment]
  }
  return current === undefined || isPlainObject(current)
}

const SIMPLE_OPERATORS = new Set(['$set', '$unset', '$inc'])

/**
 * Applies `$set`/`$unset`/`$inc` when every path is simple, without touching `doc`: the result copies
 * only the objects along the updated paths and shares everything else with `doc`. Stored documents
 * are never mutated, so the sharing is safe, and it spares a deep copy of the whole document on every
 * write. Returns the changed paths (none: nothing changed), or undefined when mingo must do it.
 */
export function simpleUpdate(doc: Document, update: UpdateFilter): { after: Document; changed: string[] } | undefined {
  const steps: Array<{ op: string; path: string; segments: string[]; value: unknown }> = []
  for (const [op, fields] of Object.entries(update)) {
    if (!SIMPLE_OPERATORS.has(op) || !isPlainObject(fields)) return undefined
    for (const [path, value] of Object.entries(fields)) {
      if (!isPlainPath(path)) return undefined
      steps.push({ op, path, segments: path.split('.'), value })
    }
  }
  // Overlapping paths ('a' and 'a.b', or one path twice) are a conflict MongoDB reports: leave that to mingo.
  const paths = new Set(steps.map((step) => step.path))
  if (paths.size < steps.length) return undefined
  for (const { segments } of steps) {
    for (let length = 1; length < segments.length; length++) {
      if (paths.has(segments.slice(0, length).join('.'))) return undefined
    }
  }
  for (const step of steps) {
    if (!reachable(doc, step.segments)) return undefined
    if (step.op === '$inc') {
      const current = valuesAtPath(doc, step.path)[0]
      if (typeof step.value !== 'number' || (current !== undefined && typeof current !== 'number')) return undefined
    }
  }

  const after: Document = { ...doc }
  const copies = new Set<Document>([after])
  /** The object in `after` holding the path's last segment, copied (or created) on the way down. */
  const writableParent = (segments: string[], create: boolean): Document | undefined => {
    let current = after
    for (const segment of segments.slice(0, -1)) {
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
    parent[key] = structuredClone(next)
    changed.push(path)
  }
  return { after, changed }
}
