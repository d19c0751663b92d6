/**
 * One in-memory secondary index: buckets of document ids per key, used to plan queries on the index's
 * first field and to enforce uniqueness. The definition (IndexSpec) is what SQLite persists.
 */
import { DuplicateKeyError, type Document, type Filter, type IndexOptions } from '../port.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import { fieldKeys, valuesAtPath } from './index-keys.js'
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
  return Object.entries(keys).map(([field, direction]) => `${field}_${direction}`).join('_')
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

/** The keys one document is filed under in one index; null when a partial index leaves it out. */
export type IndexEntry = { keys: string[]; firstFieldKeys: string[] } | null

export class SecondaryIndex {
  readonly spec: IndexSpec
  private readonly collectionName: string
  private readonly fields: string[]
  private readonly partial: CompiledQuery | undefined
  /** Whole-key buckets (for uniqueness). */
  private readonly entries = new Map<string, Set<string>>()
  /** First-field buckets (for planning); the same map when the index has one field. */
  private readonly byFirstField: Map<string, Set<string>>

  constructor(collectionName: string, spec: IndexSpec) {
    this.collectionName = collectionName
    this.spec = spec
    this.fields = Object.keys(spec.keys)
    this.partial = spec.partialFilterExpression ? compileQuery(spec.partialFilterExpression) : undefined
    this.byFirstField = this.fields.length === 1 ? this.entries : new Map()
  }

  get firstField(): string {
    return this.fields[0] as string
  }

  /** A partial index does not hold every document, so it cannot produce query candidates. */
  get usableForQueries(): boolean {
    return this.partial === undefined
  }

  covers(doc: Document): boolean {
    return this.partial === undefined || this.partial.test(doc)
  }

  entryOf(doc: Document): IndexEntry {
    if (!this.covers(doc)) return null
    const firstFieldKeys = fieldKeys(doc, this.firstField)
    if (this.fields.length === 1) return { keys: firstFieldKeys, firstFieldKeys }
    let tuples: string[][] = [[]]
    for (const field of this.fields) {
      const keys = field === this.firstField ? firstFieldKeys : fieldKeys(doc, field)
      tuples = tuples.flatMap((tuple) => keys.map((key) => [...tuple, key]))
    }
    return { keys: tuples.map((tuple) => JSON.stringify(tuple)), firstFieldKeys }
  }

  /** Equal entries need no index change (most writes leave the indexed fields alone). */
  static sameEntry(a: IndexEntry, b: IndexEntry): boolean {
    if (a === null || b === null) return a === b
    return a.keys.length === b.keys.length && a.keys.every((key, i) => key === b.keys[i])
  }

  insert(id: string, entry: IndexEntry): void {
    if (entry === null) return
    for (const key of entry.keys) addTo(this.entries, key, id)
    if (this.byFirstField !== this.entries) for (const key of entry.firstFieldKeys) addTo(this.byFirstField, key, id)
  }

  delete(id: string, entry: IndexEntry): void {
    if (entry === null) return
    for (const key of entry.keys) removeFrom(this.entries, key, id)
    if (this.byFirstField !== this.entries) for (const key of entry.firstFieldKeys) removeFrom(this.byFirstField, key, id)
  }

  /** Throws DuplicateKeyError when another document already holds one of the entry's keys. */
  assertUnique(id: string, entry: IndexEntry, doc: Document): void {
    if (!this.spec.unique || entry === null) return
    for (const key of entry.keys) {
      const holders = this.entries.get(key)
      if (holders && (holders.size > 1 || !holders.has(id))) {
        const keyValue: Record<string, unknown> = {}
        for (const field of this.fields) keyValue[field] = valuesAtPath(doc, field)[0] ?? null
        throw new DuplicateKeyError(this.collectionName, this.spec.name, keyValue)
      }
    }
  }

  idsWithFirstFieldKey(key: string): ReadonlySet<string> | undefined {
    return this.byFirstField.get(key)
  }
}
