/**
 * Covered reads of cold documents: when every field a find reads (its filter, sort and projection)
 * is a field of the index its cold plan reads, SQLite's copy of the index entries answers it, as a
 * covered query does on MongoDB, without reading or parsing the documents (docs/performance.md#covered-reads).
 * An entry tells a field's value exactly when it is a string, a number or a valid Date; for
 * anything else (null and missing share one key) the document is read after all.
 */
import type { Document, Filter, Projection, SortSpec } from '../port.js'
import { valueOfKey } from './index-keys.js'
import { fieldEnd, valueOfFieldAt } from './ordered-keys.js'

/** Top-level operators that only combine other filters, whose fields are then the ones read. */
const COMBINING = new Set(['$and', '$or', '$nor'])

function addFilterPaths(filter: Filter, into: Set<string>): boolean {
  for (const [field, condition] of Object.entries(filter)) {
    if (COMBINING.has(field)) {
      if (!Array.isArray(condition)) return false
      for (const clause of condition) {
        if (typeof clause !== 'object' || clause === null || !addFilterPaths(clause as Filter, into)) return false
      }
    } else if (field === '$comment') continue
    // `$expr`, `$where` and the like read the whole document.
    else if (field.startsWith('$')) return false
    else into.add(field)
  }
  return true
}

/** The fields an inclusion projection keeps (`_id` unless excluded); undefined for any other projection. */
function projectedPaths(projection: Projection): string[] | undefined {
  const paths: string[] = []
  let id = true
  for (const [field, value] of Object.entries(projection)) {
    if (field === '_id' && (value === 0 || value === false)) id = false
    else if (value === 1 || value === true) paths.push(field)
    else return undefined
  }
  if (paths.length === 0) return undefined
  return id ? ['_id', ...paths] : paths
}

/** Every field a find reads, or undefined when it reads the whole document (no projection, an operator that needs it all). */
export function pathsRead(filter: Filter, sort: SortSpec | undefined, projection: Projection | undefined): ReadonlySet<string> | undefined {
  const projected = projection === undefined ? undefined : projectedPaths(projection)
  if (projected === undefined) return undefined
  const paths = new Set(projected)
  if (!addFilterPaths(filter, paths)) return undefined
  for (const field of Object.keys(sort ?? {})) paths.add(field)
  return paths
}

/** Where a field's encoding was last read in an entry, and the string it decoded to. */
interface RecentString {
  entry: string
  start: number
  end: number
  value: string
}

/**
 * How to rebuild the fields a read needs from an index's entries: which of its fields, at which
 * positions. A cover is made for one read, which keeps in it the last string each field decoded to.
 */
export interface Cover {
  /** The index fields in index order, each split at its dots, with whether the read needs it. */
  readonly fields: ReadonlyArray<{ segments: readonly string[]; needed: boolean }>
  /** The position of the last needed field: entries are decoded up to it. */
  readonly last: number
  /** By field position: the string it decoded to last, reused while entries repeat its encoding. */
  readonly recent: Array<RecentString | undefined>
}

/**
 * The cover an index gives a read of `paths`, or undefined when a path is not one of its fields
 * (`_id` always is: SQLite keeps it with every entry) or a field holds an array in some cold document
 * (an entry then holds one element, not the value).
 */
export function coverOf(
  indexFields: readonly string[],
  paths: ReadonlySet<string>,
  holdsArrays: (field: number) => boolean,
): Cover | undefined {
  for (const path of paths) if (path !== '_id' && !indexFields.includes(path)) return undefined
  // A field named like the prototype would be set as one on the object a covered read builds.
  if (indexFields.some((path) => path.split('.').includes('__proto__'))) return undefined
  if (indexFields.some((_, field) => holdsArrays(field))) return undefined
  const fields = indexFields.map((path) => ({ segments: path.split('.'), needed: path !== '_id' && paths.has(path) }))
  return { fields, last: fields.findLastIndex((field) => field.needed), recent: [] }
}

/** Is the text from `start` to `end` of `entry` the text `recent` was decoded from? Compared in place. */
function repeats(recent: RecentString, entry: string, start: number, end: number): boolean {
  if (end - start !== recent.end - recent.start) return false
  for (let i = 0; i < end - start; i++) if (entry.charCodeAt(start + i) !== recent.entry.charCodeAt(recent.start + i)) return false
  return true
}

/**
 * The value of the field from `start` to `end` of the entry. Entries in index order repeat their
 * leading fields (the tenant, the process, a status), and a large answer holds one string for each
 * of them rather than one per document: fewer objects that live until the answer is sent, which
 * the young generation's collector copies (docs/performance.md#large-answers). Strings only: a Date
 * is an object the caller may change.
 */
function fieldValue(cover: Cover, field: number, entry: string, start: number, end: number): unknown {
  const recent = cover.recent[field]
  if (recent !== undefined && repeats(recent, entry, start, end)) return recent.value
  const value = valueOfFieldAt(entry, start, end)
  if (typeof value !== 'string') return value
  if (recent === undefined) {
    cover.recent[field] = { entry, start, end, value }
    return value
  }
  recent.entry = entry
  recent.start = start
  recent.end = end
  recent.value = value
  return value
}

/** Sets the value at a path, making the objects on the way; false when a value is already there. */
function setAtPath(doc: Document, segments: readonly string[], value: unknown): boolean {
  let target: Record<string, unknown> = doc
  for (let i = 0; i < segments.length - 1; i++) {
    const segment = segments[i] as string
    const next = Object.hasOwn(target, segment) ? target[segment] : (target[segment] = {})
    if (typeof next !== 'object' || next === null || Array.isArray(next) || next instanceof Date) return false
    target = next as Record<string, unknown>
  }
  const last = segments[segments.length - 1] as string
  if (Object.hasOwn(target, last)) return false
  target[last] = value
  return true
}

/**
 * The fields the cover needs of the document whose entry is `entry` and whose id key is `idKey`,
 * or undefined when the entry does not tell one of them exactly: then the caller reads the document.
 */
export function coveredDocument(cover: Cover, entry: string, idKey: string): Document | undefined {
  const id = valueOfKey(idKey)
  if (id === undefined) return undefined
  const doc: Document = { _id: id }
  let start = 0
  for (let field = 0; field <= cover.last; field++) {
    const end = fieldEnd(entry, start)
    const { segments, needed } = cover.fields[field] as Cover['fields'][number]
    if (needed) {
      const value = fieldValue(cover, field, entry, start, end)
      if (value === undefined || !setAtPath(doc, segments, value)) return undefined
    }
    start = end
  }
  return doc
}
