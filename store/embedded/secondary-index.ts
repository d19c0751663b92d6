/**
 * One in-memory secondary index: its entries in key order, which answer equality on a prefix of its
 * fields and a range on the next one, and (unique indexes) buckets of ids per whole key. The definition (IndexSpec) is what SQLite
 * persists.
 */
import { DuplicateKeyError, type Document, type Filter, type IndexOptions } from '../port.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import { keyOf, valuesAtPath } from './index-keys.js'
import { AFTER_PREFIX, idOfEntry, orderedKey, SortedKeys } from './ordered-keys.js'
import { compileQuery, type CompiledQuery } from './mingo.js'

export interface IndexSpec {
  name: string
  /** Field paths in index order. */
  keys: Record<string, 1 | -1>
  unique: boolean
  expireAfterSeconds?: number
  partialFilterExpression?: Filter
}

/** MongoDB's default index name: `field_1_other_-1`. */
export function defaultIndexName(keys: Record<string, 1 | -1>): string {
  return Object.entries(keys)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_')
}

export function indexSpecFrom(keys: Record<string, 1 | -1>, options: IndexOptions = {}): IndexSpec {
  const fields = Object.keys(keys)
  if (fields.length === 0) throw new StoreServerError(ErrorCodes.BadValue, 'Index keys cannot be empty')
  for (const field of fields) {
    if (keys[field] !== 1 && keys[field] !== -1) {
      throw new StoreServerError(ErrorCodes.BadValue, `Index key ${field} must be 1 or -1`)
    }
  }
  if (options.expireAfterSeconds !== undefined && fields.length !== 1) {
    throw new StoreServerError(ErrorCodes.BadValue, 'A TTL index (expireAfterSeconds) must have exactly one field')
  }
  const spec: IndexSpec = { name: options.name ?? defaultIndexName(keys), keys: { ...keys }, unique: options.unique === true }
  if (options.expireAfterSeconds !== undefined) spec.expireAfterSeconds = options.expireAfterSeconds
  if (options.partialFilterExpression !== undefined) spec.partialFilterExpression = structuredClone(options.partialFilterExpression)
  return spec
}

/** Same keys (in the same order) and the same options; the name is compared separately. */
export function sameDefinition(a: IndexSpec, b: IndexSpec): boolean {
  const withoutName = (spec: IndexSpec): string =>
    JSON.stringify([Object.entries(spec.keys), spec.unique, spec.expireAfterSeconds ?? null, spec.partialFilterExpression ?? null])
  return withoutName(a) === withoutName(b)
}

export function sameKeys(a: IndexSpec, b: IndexSpec): boolean {
  return JSON.stringify(Object.entries(a.keys)) === JSON.stringify(Object.entries(b.keys))
}

function addTo(buckets: Map<string, Set<string>>, key: string, id: string): void {
  const bucket = buckets.get(key)
  if (bucket) bucket.add(id)
  else buckets.set(key, new Set([id]))
}

function removeFrom(buckets: Map<string, Set<string>>, key: string, id: string): void {
  const bucket = buckets.get(key)
  if (!bucket) return
  bucket.delete(id)
  if (bucket.size === 0) buckets.delete(key)
}

/**
 * The keys one document is filed under in one index (one per combination of array elements, as in
 * a MongoDB multikey index); null when a partial index leaves it out. `unique` are the whole-key
 * buckets for uniqueness, `ordered` the ordered encodings (without the id) for queries.
 */
export type IndexEntry = { unique: string[]; ordered: string[]; arrays: readonly boolean[] } | null

/** What a query pins an index's fields to: equality values on a prefix, then maybe a range. */
export interface IndexBounds {
  /** Encoded prefixes (every combination of the pinned values of the leading fields). */
  prefixes: string[]
  /** The fields the prefixes cover. */
  fields: number
  /** Lower and upper encoded bounds on the next field (within one kind), appended to each prefix. */
  range?: { from: string; to: string }
}

/** The fields a partial filter of `{ field: { $exists: true } }` conditions only requires; undefined for any other filter. */
function fieldsRequiredToExist(filter: Filter): string[] | undefined {
  const fields: string[] = []
  for (const [field, condition] of Object.entries(filter)) {
    const operators = typeof condition === 'object' && condition !== null ? Object.entries(condition) : []
    if (field.startsWith('$') || operators.length !== 1 || operators[0]?.[0] !== '$exists' || operators[0][1] !== true) return undefined
    fields.push(field)
  }
  return fields.length > 0 ? fields : undefined
}

/** The value at a path of plain objects; undefined past a non-object, `NOT_PLAIN` past an array (multikey: compared as a whole). */
const NOT_PLAIN = Symbol('not plain')
function valueAlong(doc: Document, segments: readonly string[]): unknown {
  let value: unknown = doc
  for (const segment of segments) {
    if (typeof value !== 'object' || value === null) return undefined
    if (Array.isArray(value)) return NOT_PLAIN
    value = Object.hasOwn(value, segment) ? (value as Document)[segment] : undefined
  }
  return value
}

function samePlainValue(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if ((a === null || a === undefined) && (b === null || b === undefined)) return true
  return a instanceof Date && b instanceof Date && a.getTime() === b.getTime()
}

/** Equal as index values for certain: plain values alike, or arrays of plain values alike in order. */
function sameIndexedValue(a: unknown, b: unknown): boolean {
  if (a === NOT_PLAIN || b === NOT_PLAIN) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((element, i) => isPlain(element) && samePlainValue(element, b[i]))
  }
  return isPlain(a) && samePlainValue(a, b)
}

function isPlain(value: unknown): boolean {
  return value === null || value === undefined || typeof value !== 'object' || value instanceof Date
}

export class SecondaryIndex {
  readonly spec: IndexSpec
  readonly fields: string[]
  private readonly collectionName: string
  private readonly partial: CompiledQuery | undefined
  /** The fields the partial filter requires to exist, when that is all it requires. */
  private readonly requiredFields: readonly string[] | undefined
  /** Whole-key buckets, kept for unique indexes only. */
  private readonly entries = new Map<string, Set<string>>()
  /** Every entry as its fields' ordered encoding followed by the document id. */
  private readonly ordered = new SortedKeys()
  /** Per field: how many documents hold an array there (then bounds on it are not intersected). */
  private readonly arrayHolders: number[]
  /** Each field's path, split at its dots. */
  private readonly fieldSegments: readonly string[][]
  /** The `arrays` of every single-valued entry (shared: entries are never changed). */
  private readonly noArrays: readonly boolean[]

  constructor(collectionName: string, spec: IndexSpec) {
    this.collectionName = collectionName
    this.spec = spec
    this.fields = Object.keys(spec.keys)
    this.partial = spec.partialFilterExpression ? compileQuery(spec.partialFilterExpression) : undefined
    this.requiredFields = spec.partialFilterExpression ? fieldsRequiredToExist(spec.partialFilterExpression) : undefined
    this.arrayHolders = this.fields.map(() => 0)
    this.fieldSegments = this.fields.map((field) => field.split('.'))
    this.noArrays = this.fields.map(() => false)
  }

  get firstField(): string {
    return this.fields[0] as string
  }

  /**
   * Whether the index can produce the candidates of a query pinning `pinned`: a partial index does
   * not hold every document, so only when the query reaches nothing it leaves out. That is known for
   * a partial filter of `{ field: { $exists: true } }` conditions alone, when the query pins each of
   * those fields to values other than null (`{ scheduleKey: { $in: [...] } }`).
   */
  usableFor(pinned: ReadonlyMap<string, readonly unknown[]>): boolean {
    if (this.partial === undefined) return true
    return (
      this.requiredFields !== undefined &&
      this.requiredFields.every((field) => pinned.get(field)?.every((value) => value !== null && value !== undefined) === true)
    )
  }

  covers(doc: Document): boolean {
    return this.partial === undefined || this.partial.test(doc)
  }

  entryOf(doc: Document): IndexEntry {
    if (!this.covers(doc)) return null
    return this.singleValuedEntry(doc) ?? this.multikeyEntry(doc)
  }

  /**
   * The entry of a document that holds one value in each indexed field, with no array on the way:
   * nearly every write, computed without the combinations a multikey entry needs. Undefined when
   * an array is met.
   */
  private singleValuedEntry(doc: Document): IndexEntry | undefined {
    let ordered = ''
    const uniqueParts: string[] = []
    for (const segments of this.fieldSegments) {
      let value: unknown = doc
      for (const segment of segments) {
        if (typeof value !== 'object' || value === null) {
          value = null
          break
        }
        if (Array.isArray(value)) return undefined
        value = Object.hasOwn(value, segment) ? (value as Document)[segment] : null
      }
      if (Array.isArray(value)) return undefined
      ordered += orderedKey(value ?? null)
      if (this.spec.unique) uniqueParts.push(keyOf(value))
    }
    const unique = !this.spec.unique ? [] : [uniqueParts.length === 1 ? (uniqueParts[0] as string) : JSON.stringify(uniqueParts)]
    return { unique, ordered: [ordered], arrays: this.noArrays }
  }

  private multikeyEntry(doc: Document): IndexEntry {
    // Each field's distinct values; the entry's keys are every combination of one value per field.
    const arrays: boolean[] = []
    const valuesByField = this.fields.map((field) => {
      const { values, array } = fieldValues(doc, field)
      arrays.push(array)
      return values
    })
    const ordered = combinations(valuesByField.map((values) => [...values.values()].map(orderedKey))).map((parts) => parts.join(''))
    const unique = !this.spec.unique
      ? []
      : combinations(valuesByField.map((values) => [...values.keys()])).map((parts) =>
          parts.length === 1 ? (parts[0] as string) : JSON.stringify(parts),
        )
    return { unique: [...new Set(unique)], ordered: [...new Set(ordered)], arrays }
  }

  /**
   * Whether `before` and `after` hold the same values in every indexed field, compared as they are
   * (plain values, dates by time, arrays of those element by element): then their entries are equal
   * without encoding either. Most writes leave most of a collection's indexes alone, and encoding
   * the keys is what maintaining an index costs. False when unsure (objects, a partial filter).
   */
  sameFieldValues(before: Document, after: Document): boolean {
    if (this.partial !== undefined) return false
    for (const segments of this.fieldSegments) {
      if (!sameIndexedValue(valueAlong(before, segments), valueAlong(after, segments))) return false
    }
    return true
  }

  /** Equal entries need no index change (most writes leave the indexed fields alone). */
  static sameEntry(a: IndexEntry, b: IndexEntry): boolean {
    if (a === null || b === null) return a === b
    return (
      a.ordered.length === b.ordered.length &&
      a.ordered.every((key, i) => key === b.ordered[i]) &&
      a.arrays.every((array, i) => array === b.arrays[i])
    )
  }

  insert(id: string, entry: IndexEntry): void {
    if (entry === null) return
    for (const key of entry.unique) addTo(this.entries, key, id)
    for (const key of entry.ordered) this.ordered.insert(key + id)
    entry.arrays.forEach((array, i) => {
      if (array) this.arrayHolders[i] = (this.arrayHolders[i] as number) + 1
    })
  }

  delete(id: string, entry: IndexEntry): void {
    if (entry === null) return
    for (const key of entry.unique) removeFrom(this.entries, key, id)
    for (const key of entry.ordered) this.ordered.delete(key + id)
    entry.arrays.forEach((array, i) => {
      if (array) this.arrayHolders[i] = (this.arrayHolders[i] as number) - 1
    })
  }

  /** Throws DuplicateKeyError when another document already holds one of the entry's keys. */
  assertUnique(id: string, entry: IndexEntry, doc: Document): void {
    if (!this.spec.unique || entry === null) return
    for (const key of entry.unique) {
      const holders = this.entries.get(key)
      if (holders && (holders.size > 1 || !holders.has(id))) this.duplicateKey(doc)
    }
  }

  /** Throws the DuplicateKeyError for `doc`'s key in this index. */
  duplicateKey(doc: Document): never {
    const keyValue: Record<string, unknown> = {}
    for (const field of this.fields) keyValue[field] = valuesAtPath(doc, field)[0] ?? null
    throw new DuplicateKeyError(this.collectionName, this.spec.name, keyValue)
  }

  /**
   * The bounds a query's equalities (`pinned`, per field) and ranges (`ranges`, per field) give on
   * this index, or undefined when they do not constrain its first field. At most `maxPrefixes`
   * combinations of pinned values are expanded; the rest of the fields are then left unbounded.
   */
  boundsFor(
    pinned: ReadonlyMap<string, unknown[]>,
    ranges: ReadonlyMap<string, RangeCondition>,
    maxPrefixes = 64,
    holdsArrays: (field: number) => boolean = (field) => this.arrayHolders[field] !== 0,
  ): IndexBounds | undefined {
    let prefixes = ['']
    let fields = 0
    for (const field of this.fields) {
      const values = pinned.get(field)
      if (!values || prefixes.length * values.length > maxPrefixes) break
      // Nearly every plan pins each field to one value: the prefixes are extended in place, without
      // the set and the arrays of the general case (this runs for every index on every read planned).
      if (values.length === 1) {
        const key = orderedKey(values[0])
        for (let i = 0; i < prefixes.length; i++) prefixes[i] += key
      } else {
        const keys = [...new Set(values.map(orderedKey))]
        prefixes = prefixes.flatMap((prefix) => keys.map((key) => prefix + key))
      }
      fields++
    }
    const rangeField = this.fields[fields]
    const range = rangeField === undefined ? undefined : ranges.get(rangeField)
    if (range) {
      // With arrays in the field, each of two bounds may be met by a different element: keep only the
      // lower one, unless one element must meet both (or there is only the upper one).
      const intersect = range.sameElement === true || range.lower === undefined || !holdsArrays(fields)
      // An entry with exactly the value v starts with orderedKey(v): `+ AFTER_PREFIX` passes all of them.
      const { lower, upper } = range
      const from = lower === undefined ? range.tag : orderedKey(lower.value) + (lower.inclusive ? '' : AFTER_PREFIX)
      const to =
        upper === undefined || !intersect ? range.tag + AFTER_PREFIX : orderedKey(upper.value) + (upper.inclusive ? AFTER_PREFIX : '')
      return { prefixes, fields, range: { from, to } }
    }
    return fields === 0 ? undefined : { prefixes, fields }
  }

  /** The key ranges (`from <= key < to`) the bounds cover, one per prefix. */
  rangesOf(bounds: IndexBounds): Array<{ from: string; to: string }> {
    return bounds.prefixes.map((prefix) =>
      bounds.range ? { from: prefix + bounds.range.from, to: prefix + bounds.range.to } : { from: prefix, to: prefix + AFTER_PREFIX },
    )
  }

  /** The ids of the documents within the bounds, stopping once there are more than `limit`. */
  idsWithin(bounds: IndexBounds, limit = Infinity): string[] {
    const ids: string[] = []
    for (const { from, to } of this.rangesOf(bounds)) {
      for (const entry of this.ordered.range(from, to)) {
        ids.push(idOfEntry(entry, this.fields.length))
        if (ids.length > limit) return ids
      }
    }
    return ids
  }
}

/** A range a query puts on one field: bounds of one kind (tag), either may be open. */
export interface RangeCondition {
  tag: string
  lower?: { value: unknown; inclusive: boolean }
  upper?: { value: unknown; inclusive: boolean }
  /** Both bounds hold of one array element (`$elemMatch`), so they bound the index's keys together even where arrays are. */
  sameElement?: true
}

/** The values a field is indexed under (array elements one by one, null when missing) by their `keyOf`, and whether it held an array. */
function fieldValues(doc: Document, path: string): { values: Map<string, unknown>; array: boolean } {
  // Equal values (as MongoDB compares them) are filed once.
  const values = new Map<string, unknown>()
  let array = false
  const add = (value: unknown): void => {
    const key = keyOf(value)
    if (!values.has(key)) values.set(key, value)
  }
  for (const value of valuesAtPath(doc, path)) {
    if (Array.isArray(value) && value.length > 0) {
      array = true
      for (const element of value) add(element)
    } else {
      array ||= Array.isArray(value)
      add(value)
    }
  }
  if (values.size === 0) add(null)
  return { values, array }
}

/** Every way of taking one part from each list, in order. */
function combinations(lists: string[][]): string[][] {
  let tuples: string[][] = [[]]
  for (const list of lists) tuples = tuples.flatMap((tuple) => list.map((part) => [...tuple, part]))
  return tuples
}
