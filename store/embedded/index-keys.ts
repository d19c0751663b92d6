/**
 * Turns field values into the string keys the in-memory indexes are bucketed by. Equal values (as
 * MongoDB compares them for equality) get equal keys; values of different types never share a key.
 */
import type { Document } from '../port.js'
import { encodeDocument } from './document-codec.js'

/** A value an index lookup can be planned on: anything else is left to a scan. */
export type ScalarValue = string | number | boolean | Date

export function isScalar(value: unknown): value is ScalarValue {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Date
}

/** Missing and null share one key, as they do in a MongoDB index. */
export function keyOf(value: unknown): string {
  if (value === undefined || value === null) return 'null'
  if (typeof value === 'string') return `s:${value}`
  if (typeof value === 'number') return `n:${value}`
  if (typeof value === 'boolean') return `b:${value}`
  if (value instanceof Date) return `d:${value.getTime()}`
  return `o:${encodeDocument({ v: value })}`
}

/** The value a `keyOf` key stands for when the key tells it exactly (a string, finite number, boolean or Date); else undefined. */
export function valueOfKey(key: string): ScalarValue | undefined {
  const body = key.slice(2)
  switch (key.slice(0, 2)) {
    case 's:':
      return body
    case 'n:': {
      const value = Number(body)
      return Number.isFinite(value) ? value : undefined
    }
    case 'b:':
      return body === 'true'
    case 'd:': {
      const time = Number(body)
      return Number.isNaN(time) ? undefined : new Date(time)
    }
    default:
      return undefined
  }
}

/**
 * Every value reached by a dotted path, descending into arrays the way MongoDB queries do (a
 * non-numeric segment applies to each element of an array; a numeric one also picks by position).
 */
export function valuesAtPath(doc: unknown, path: string): unknown[] {
  let current: unknown[] = [doc]
  for (const segment of path.split('.')) {
    const next: unknown[] = []
    for (const value of current) {
      if (Array.isArray(value)) {
        if (/^\d+$/.test(segment) && Number(segment) < value.length) next.push(value[Number(segment)])
        for (const element of value) {
          if (typeof element === 'object' && element !== null && !Array.isArray(element) && Object.hasOwn(element, segment)) {
            next.push((element as Document)[segment])
          }
        }
      } else if (typeof value === 'object' && value !== null && Object.hasOwn(value, segment)) {
        next.push((value as Document)[segment])
      }
    }
    current = next
  }
  return current
}
