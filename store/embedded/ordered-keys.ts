/**
 * What ordered index entries are made of: field values encoded so that, within one type, comparing
 * the strings orders them as MongoDB orders the values, and a sorted set of such strings that takes
 * inserts and deletes in O(√n) and reads any range in order.
 */
import { keyOf } from './index-keys.js'

/** Ends every encoded field, so a field's encoding is never a prefix of a different value's. */
const FIELD_END = '\u0000\u0000'
/** Above every character an encoding can continue with: the end of a prefix range. */
export const AFTER_PREFIX = '\uffff'

/** One tag per kind of value; ranges never cross kinds (MongoDB compares only values of one type). */
const TAG = { number: 'n', string: 's', date: 'd', other: 'o' } as const

const float = new Float64Array(1)
const words = new Uint32Array(float.buffer)

/** 16 hex digits ordered as the numbers are (IEEE 754 bits, sign-folded). */
function sortableNumber(value: number): string {
  float[0] = value === 0 ? 0 : value
  // Little-endian: words[1] holds the sign and exponent.
  let high = words[1] as number
  let low = words[0] as number
  if (high >>> 31) {
    high = ~high >>> 0
    low = ~low >>> 0
  } else {
    high = (high | 0x80000000) >>> 0
  }
  return high.toString(16).padStart(8, '0') + low.toString(16).padStart(8, '0')
}

/** The 32-bit word that 8 lower-case hex digits of `text` from `at` spell, read without cutting them out. */
function hexWord(text: string, at: number): number {
  let word = 0
  for (let i = at; i < at + 8; i++) {
    const code = text.charCodeAt(i)
    // '0'-'9' are 48-57, 'a'-'f' 97-102: what `toString(16)` writes.
    word = word * 16 + (code <= 57 ? code - 48 : code - 87)
  }
  return word
}

/** The number `sortableNumber` encoded as the 16 hex digits of `text` from `at`. */
function numberOfSortable(text: string, at: number): number {
  let high = hexWord(text, at)
  let low = hexWord(text, at + 8)
  if (high >>> 31) high = (high & 0x7fffffff) >>> 0
  else {
    high = ~high >>> 0
    low = ~low >>> 0
  }
  words[1] = high
  words[0] = low
  return float[0] as number
}

/** `\0` is escaped so that FIELD_END stays below anything a string continues with. */
function escaped(text: string): string {
  return text.includes('\u0000') ? text.replaceAll('\u0000', '\u0000\u0001') : text
}

/** The kind tag a range on `value` stays within, or undefined when the value has no usable order. */
export function rangeTag(value: unknown): string | undefined {
  if (typeof value === 'number') return Number.isNaN(value) ? undefined : TAG.number
  if (typeof value === 'string') return TAG.string
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? undefined : TAG.date
  return undefined
}

/** One field value's ordered encoding (FIELD_END included). Equal values give equal encodings. */
export function orderedKey(value: unknown): string {
  const tag = rangeTag(value)
  if (tag === TAG.number) return tag + sortableNumber(value as number) + FIELD_END
  if (tag === TAG.string) return tag + escaped(value as string) + FIELD_END
  if (tag === TAG.date) return tag + sortableNumber((value as Date).getTime()) + FIELD_END
  return TAG.other + escaped(keyOf(value)) + FIELD_END
}

/** How long a number's or a Date's encoding is: its tag, 16 hex digits and FIELD_END. */
const SORTABLE_LENGTH = 1 + 16 + FIELD_END.length

/**
 * The value one field's encoding (as `fieldAt` cuts it out of an entry) stands for, when the encoding
 * tells it exactly: a number, a string or a valid Date. Undefined for the rest (null and
 * missing share a key, other kinds keep only what equality needs), so a caller reads the document.
 */
export function valueOfOrderedKey(encoding: string): number | string | Date | undefined {
  return valueOfFieldAt(encoding, 0, encoding.length)
}

/**
 * `valueOfOrderedKey` of the field from `start` to `end` (`fieldEnd`) of an entry, read in place: a
 * covered read decodes every field of every entry it answers from, and cutting each out first
 * made garbage of them all.
 */
export function valueOfFieldAt(entry: string, start: number, end: number): number | string | Date | undefined {
  if (end - start < 1 + FIELD_END.length || !entry.startsWith(FIELD_END, end - FIELD_END.length)) return undefined
  switch (entry[start]) {
    case TAG.string: {
      const body = entry.slice(start + 1, end - FIELD_END.length)
      return body.includes('\u0000') ? body.replaceAll('\u0000\u0001', '\u0000') : body
    }
    case TAG.number:
      return end - start === SORTABLE_LENGTH ? numberOfSortable(entry, start + 1) : undefined
    case TAG.date:
      return end - start === SORTABLE_LENGTH ? new Date(numberOfSortable(entry, start + 1)) : undefined
    default:
      return undefined
  }
}

/**
 * The key ranges of one field's values that each order as MongoDB orders them (numbers, strings,
 * dates: one kind each), and the range of the rest (null, missing, booleans, objects), whose order
 * differs: appended to a prefix, together they cover every value of the field once.
 */
export const ORDERED_KINDS: ReadonlyArray<{ from: string; to: string; ordered: boolean }> = [
  { from: TAG.date, to: TAG.date + AFTER_PREFIX, ordered: true },
  { from: TAG.number, to: TAG.number + AFTER_PREFIX, ordered: true },
  { from: TAG.other, to: TAG.other + AFTER_PREFIX, ordered: false },
  { from: TAG.string, to: TAG.string + AFTER_PREFIX, ordered: true },
]

/** The encoding of the field that starts at `at` in an entry (FIELD_END included). */
export function fieldAt(entry: string, at: number): string {
  return entry.slice(at, fieldEnd(entry, at))
}

/** Where the field that starts at `at` in an entry ends (after its FIELD_END), or the entry's end. */
export function fieldEnd(entry: string, at: number): number {
  const end = entry.indexOf(FIELD_END, at)
  return end < 0 ? entry.length : end + FIELD_END.length
}

/** Where the id starts in an entry of `fields` encoded fields followed by the id. */
export function idOfEntry(entry: string, fields: number): string {
  let at = 0
  for (let i = 0; i < fields; i++) at = fieldEnd(entry, at)
  return entry.slice(at)
}

const MAX_CHUNK = 1024

/** A sorted set of strings kept in chunks of at most MAX_CHUNK, each sorted, in order. */
export class SortedKeys {
  private readonly chunks: string[][] = []

  get size(): number {
    let size = 0
    for (const chunk of this.chunks) size += chunk.length
    return size
  }

  insert(key: string): void {
    if (this.chunks.length === 0) {
      this.chunks.push([key])
      return
    }
    const c = Math.min(this.chunkFor(key), this.chunks.length - 1)
    const chunk = this.chunks[c] as string[]
    const at = lowerBound(chunk, key)
    if (chunk[at] === key) return
    chunk.splice(at, 0, key)
    if (chunk.length > MAX_CHUNK) this.chunks.splice(c + 1, 0, chunk.splice(chunk.length >> 1))
  }

  delete(key: string): void {
    const c = this.chunkFor(key)
    const chunk = this.chunks[c]
    if (!chunk) return
    const at = lowerBound(chunk, key)
    if (chunk[at] !== key) return
    chunk.splice(at, 1)
    if (chunk.length === 0) this.chunks.splice(c, 1)
  }

  /** The keys k with from <= k < to, in order. */
  *range(from: string, to: string): Generator<string> {
    const first = this.chunkFor(from)
    for (let c = first; c < this.chunks.length; c++) {
      const chunk = this.chunks[c] as string[]
      for (let i = c === first ? lowerBound(chunk, from) : 0; i < chunk.length; i++) {
        const key = chunk[i] as string
        if (key >= to) return
        yield key
      }
    }
  }

  /** The first chunk whose last key is >= key (chunks.length when there is none). */
  private chunkFor(key: string): number {
    let low = 0
    let high = this.chunks.length
    while (low < high) {
      const mid = (low + high) >> 1
      const chunk = this.chunks[mid] as string[]
      if ((chunk[chunk.length - 1] as string) < key) low = mid + 1
      else high = mid
    }
    return low
  }
}

/** The first position in the sorted `keys` whose key is >= key. */
function lowerBound(keys: readonly string[], key: string): number {
  let low = 0
  let high = keys.length
  while (low < high) {
    const mid = (low + high) >> 1
    if ((keys[mid] as string) < key) low = mid + 1
    else high = mid
  }
  return low
}
