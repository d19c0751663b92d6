/**
 * The JSON form of a document in SQLite. Dates are tagged (`{"$date":"<ISO>"}`) so they come back as
 * Dates. Anything JSON cannot hold faithfully (class instances such as ObjectId, Buffer, RegExp, Map)
 * is refused rather than silently mangled; `undefined` (and function) fields are dropped, like the
 * MongoDB adapter does with `ignoreUndefined`.
 */
import { deepCopy } from '../../lib/deep-copy.js'
import type { Document } from '../port.js'

/** The store's copies of documents it hands out or takes in. */
export const cloneDocument = deepCopy

const DATE_TAG = '$date'

function isPlainContainer(value: object): boolean {
  if (Array.isArray(value)) return true
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Why a value cannot be saved, or undefined when it can (JSON may still drop or change it). */
function refusal(value: object, key: string): TypeError | undefined {
  if (isPlainContainer(value) && typeof (value as { toJSON?: unknown }).toJSON !== 'function') return undefined
  const kind = value.constructor?.name ?? 'object'
  return new TypeError(`The embedded store cannot save a ${kind} value (field "${key}"); use plain JSON values and Dates`)
}

/** Assigns an own field, `__proto__` included (a plain assignment would set the prototype instead). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

interface EncodingScan {
  /** JSON changes a value: drops `undefined` (and functions), turns NaN into null. */
  lossy: boolean
}

/**
 * The value as JSON.stringify should see it: Dates replaced by their `$date` tag, copying only the
 * containers on the way to a Date (most documents have none, or one near the top, and come back
 * as they are). Refuses what cannot be saved; notes what JSON would change.
 */
function tagged(value: unknown, key: string, scan: EncodingScan): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value
    case 'number':
      if (!Number.isFinite(value)) scan.lossy = true
      return value
    case 'bigint':
      throw new TypeError(`The embedded store cannot save a bigint value (field "${key}")`)
    case 'undefined':
    case 'function':
    case 'symbol':
      scan.lossy = true
      return value
  }
  if (value === null) return value
  if (value instanceof Date) return { [DATE_TAG]: Number.isNaN(value.getTime()) ? null : value.toISOString() }
  const container = value as object
  const refused = refusal(container, key)
  if (refused) throw refused
  if (Array.isArray(container)) {
    let copy: unknown[] | undefined
    for (let i = 0; i < container.length; i++) {
      const item: unknown = container[i]
      const next = tagged(item, String(i), scan)
      if (next !== item) (copy ??= container.slice())[i] = next
    }
    return copy ?? container
  }
  const fields = container as Record<string, unknown>
  let copy: Record<string, unknown> | undefined
  for (const field in fields) {
    const item = fields[field]
    const next = tagged(item, field, scan)
    if (next !== item) setOwn((copy ??= { ...fields }), field, next)
  }
  return copy ?? fields
}

/** Turns tagged dates back into Dates, in place (a walk is three times faster than a JSON reviver). */
function reviveDates(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const revived = reviveDates(value[i])
      if (revived !== value[i]) value[i] = revived
    }
    return value
  }
  const fields = value as Record<string, unknown>
  const iso = fields[DATE_TAG]
  if ((typeof iso === 'string' || iso === null) && Object.keys(fields).length === 1) return new Date(iso ?? Number.NaN)
  for (const key of Object.keys(fields)) {
    const revived = reviveDates(fields[key])
    if (revived !== fields[key]) fields[key] = revived
  }
  return value
}

export function encodeDocument(doc: Document): string {
  return encodeForStorage(doc).text
}

/**
 * The JSON for SQLite, and whether decoding it gives back an equal document. When it does, the
 * stored copy can stay in memory as it is, which saves a parse on every write.
 */
export function encodeForStorage(doc: Document): { text: string; exact: boolean } {
  const scan: EncodingScan = { lossy: false }
  const text = JSON.stringify(tagged(doc, '', scan))
  return { text, exact: !scan.lossy }
}

/**
 * Whether two documents that hold only what JSON keeps and Dates (a stored document, or one whose
 * encoding is exact) are stored alike: the same fields in the same order with equal values. Tells
 * what comparing their encodings would, without encoding them.
 */
export function storedAlike(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && sameTime(a, b)
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!storedAlike(a[i], b[i])) return false
    return true
  }
  const aFields = a as Record<string, unknown>
  const bFields = b as Record<string, unknown>
  const aKeys = Object.keys(aFields)
  const bKeys = Object.keys(bFields)
  if (aKeys.length !== bKeys.length) return false
  for (let i = 0; i < aKeys.length; i++) {
    const key = aKeys[i] as string
    if (key !== bKeys[i] || !storedAlike(aFields[key], bFields[key])) return false
  }
  return true
}

/** Invalid Dates are stored alike too (`{"$date":null}`). */
function sameTime(a: Date, b: Date): boolean {
  const aTime = a.getTime()
  const bTime = b.getTime()
  return aTime === bTime || (Number.isNaN(aTime) && Number.isNaN(bTime))
}

export function decodeDocument(text: string): Document {
  const doc = JSON.parse(text) as Document
  return text.includes(`"${DATE_TAG}"`) ? (reviveDates(doc) as Document) : doc
}
