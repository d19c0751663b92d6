/**
 * The JSON form of a document in SQLite. Dates are tagged (`{"$date":"<ISO>"}`) so they come back as
 * Dates. Anything JSON cannot hold faithfully (class instances such as ObjectId, Buffer, RegExp, Map)
 * is refused rather than silently mangled; `undefined` (and function) fields are dropped, like the
 * MongoDB adapter does with `ignoreUndefined`.
 */
import type { Document } from '../port.js'

const DATE_TAG = '$date'

function isPlainContainer(value: object): boolean {
  if (Array.isArray(value)) return true
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

/** Set while encoding when JSON changes a value (drops `undefined`, turns NaN into null). */
let lossy = false

function replacer(this: Record<string, unknown>, key: string, value: unknown): unknown {
  // JSON.stringify has already called Date#toJSON on `value`; the holder still has the Date itself.
  const raw = this[key]
  if (typeof raw === 'bigint') throw new TypeError(`The embedded store cannot save a bigint value (field "${key}")`)
  if (raw === undefined || typeof raw === 'function' || typeof raw === 'symbol' || (typeof raw === 'number' && !Number.isFinite(raw))) {
    lossy = true
    return value
  }
  if (raw instanceof Date) {
    return { [DATE_TAG]: Number.isNaN(raw.getTime()) ? null : raw.toISOString() }
  }
  if (typeof raw === 'object' && raw !== null && !isPlainContainer(raw)) {
    const kind = raw.constructor?.name ?? 'object'
    throw new TypeError(`The embedded store cannot save a ${kind} value (field "${key}"); use plain JSON values and Dates`)
  }
  return value
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
  return JSON.stringify(doc, replacer)
}

/**
 * The JSON for SQLite, and whether decoding it gives back an equal document. When it does, the
 * stored copy can stay in memory as it is, which saves a parse on every write.
 */
export function encodeForStorage(doc: Document): { text: string; exact: boolean } {
  lossy = false
  const text = JSON.stringify(doc, replacer)
  return { text, exact: !lossy }
}

export function decodeDocument(text: string): Document {
  const doc = JSON.parse(text) as Document
  return text.includes(`"${DATE_TAG}"`) ? (reviveDates(doc) as Document) : doc
}
