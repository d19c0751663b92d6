/**
 * MongoDB query, update, projection and aggregation semantics for the embedded store: mingo, with the
 * options every call shares (scripts off: `$where`, `$function`, `$accumulator` must never run code
 * that came in a request; MongoDB's strict semantics; no cloning, the callers clone exactly what they
 * hand out), short-cut by fast-paths.ts for the hot simple shapes.
 */
import { cloneDocument } from './document-codec.js'
import { Aggregator, Context, Query, update } from 'mingo'
import type { Modifier } from 'mingo/updater'
import type { Criteria, Options } from 'mingo/types'
import { compare, resolve } from 'mingo/util'
import type { Document, Filter, Projection, SortSpec, UpdateFilter } from '../port.js'
import { compileMongoRegex } from '../regex.js'
import { simpleFilterMatcher, simpleProjector, simpleUpdate } from './fast-paths.js'

export interface CompiledQuery {
  test(doc: Document): boolean
}

function options(collectionResolver?: (name: string) => Document[]): Partial<Options> {
  return collectionResolver
    ? { idKey: '_id', scriptEnabled: false, useStrictMode: true, collectionResolver }
    : { idKey: '_id', scriptEnabled: false, useStrictMode: true }
}

const baseOptions = options()

/**
 * `$regex` with RE2 semantics (linear time, regex.ts) instead of mingo's own, which runs a native
 * backtracking RegExp. mingo keeps its built-in operators over added ones of the same name, so a
 * filter's `{ $regex, $options }` is rewritten to this operator before mingo sees it.
 */
const RE2_REGEX = '$__re2Regex'

interface Re2RegexSpec {
  pattern: string
  options?: string
}

/** A string field matches when it, or any string of an array it holds (one level deep, as MongoDB), matches. */
const re2RegexOperator = (selector: string, spec: Re2RegexSpec) => {
  const regex = compileMongoRegex(spec.pattern, spec.options)
  return (doc: Document): boolean => {
    const value = resolve(doc, selector, { unwrapArray: true })
    const candidates = Array.isArray(value) ? [...value, ...value.flat()] : [value]
    return candidates.some((candidate) => typeof candidate === 'string' && regex.test(candidate))
  }
}

const queryOptions: Partial<Options> = { ...baseOptions, context: Context.init({ query: { [RE2_REGEX]: re2RegexOperator as never } }) }

function hasRegex(filter: unknown): boolean {
  if (Array.isArray(filter)) return filter.some(hasRegex)
  if (typeof filter !== 'object' || filter === null) return false
  return Object.entries(filter).some(([key, value]) => key === '$regex' || hasRegex(value))
}

/** The filter with every `{ $regex, $options }` turned into the RE2 operator (a copy; the input is not changed). */
function withRe2Regexes(filter: unknown): unknown {
  if (Array.isArray(filter)) return filter.map(withRe2Regexes)
  if (typeof filter !== 'object' || filter === null || filter instanceof Date) return filter
  const rewritten: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(filter)) {
    if (key === '$options') continue
    if (key === '$regex' && typeof value === 'string') {
      const options = (filter as { $options?: unknown }).$options
      rewritten[RE2_REGEX] = { pattern: value, ...(typeof options === 'string' ? { options } : {}) } satisfies Re2RegexSpec
    } else rewritten[key] = withRe2Regexes(value)
  }
  return rewritten
}

export function compileQuery(filter: Filter): CompiledQuery {
  const simple = simpleFilterMatcher(filter)
  if (simple) return { test: simple }
  if (hasRegex(filter)) return new Query<Document>(withRe2Regexes(filter) as Criteria<Document>, queryOptions)
  return new Query<Document>(filter as Criteria<Document>, baseOptions)
}

/** Does any updated path use the positional `$` (which needs the filter to resolve)? */
function usesPositional(update: UpdateFilter): boolean {
  return Object.values(update).some(
    (fields) => typeof fields === 'object' && fields !== null && Object.keys(fields).some((path) => /(^|\.)\$(\.|$)/.test(path)),
  )
}

/**
 * `doc` with the update operators applied, and the paths that changed (none: nothing did); `doc`
 * itself is left as it is. `filter` resolves the positional `$` operator. Values are deep-copied
 * in, so the result never shares objects with the caller's update document.
 */
export function updatedCopy(doc: Document, modifier: UpdateFilter, filter: Filter | undefined): { after: Document; changed: string[] } {
  const simple = simpleUpdate(doc, modifier)
  if (simple) return simple
  const after = cloneDocument(doc)
  const changed = update(
    after,
    modifier as Modifier<Document>,
    undefined,
    (usesPositional(modifier) ? filter : undefined) as Criteria<Document> | undefined,
    {
      cloneMode: 'deep',
      queryOptions: baseOptions,
    },
  )
  return { after, changed }
}

/** A sort key that compares as mingo compares two values of its type, as a primitive (a Date by its time). */
type PrimitiveKind = 'number' | 'string' | 'boolean' | 'date'

function primitiveKind(value: unknown): PrimitiveKind | undefined {
  const kind = typeof value
  if (kind === 'number' || kind === 'string' || kind === 'boolean') return kind
  return value instanceof Date ? 'date' : undefined
}

/** The kind every key of the column has, or undefined when they differ or one is no primitive (missing, null, an array…). */
function sharedKind(column: readonly unknown[]): PrimitiveKind | undefined {
  const kind = column.length === 0 ? undefined : primitiveKind(column[0])
  return kind !== undefined && column.every((key) => primitiveKind(key) === kind) ? kind : undefined
}

function primitiveCompare(a: unknown, b: unknown): number {
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0
}

/**
 * The value a sort reads, as mingo's `resolve` reads it: a top-level field (the usual sort key,
 * such as `lastUpdate`) directly, since `resolve` splits the path into a new array for every document.
 */
function sortKey(doc: Document, field: string): unknown {
  if (field.includes('.') || field === '__proto__') return resolve(doc, field)
  return Object.hasOwn(doc, field) ? doc[field] : undefined
}

/**
 * Sorted as mingo's `$sort` sorts (its value order; ties keep their order), but on sort keys read
 * once per document: mingo's own sort groups by hashed values and takes ~50 ms for 10,000 documents.
 * A field whose keys are all numbers, all strings, all booleans or all Dates (the usual sort: dates
 * of one field) compares them as primitives, which is how mingo compares two values of one such
 * type; any other field goes through mingo's `compare`. The keys are kept a column per field and
 * the documents' positions are sorted, so a large answer makes no object per document to sort it.
 */
function sorted(docs: Document[], sort: SortSpec): Document[] {
  const fields = Object.entries(sort)
  const columns = fields.map(([field]) => docs.map((doc) => sortKey(doc, field)))
  const comparers = columns.map((column): ((a: unknown, b: unknown) => number) => {
    const kind = sharedKind(column)
    if (kind === 'date') for (let i = 0; i < column.length; i++) column[i] = (column[i] as Date).getTime()
    return kind === undefined ? compare : primitiveCompare
  })
  const directions = fields.map(([, direction]) => direction)
  const positions = docs.map((_, position) => position)
  positions.sort((a, b) => {
    for (let i = 0; i < columns.length; i++) {
      const column = columns[i] as unknown[]
      const order = (comparers[i] as (a: unknown, b: unknown) => number)(column[a], column[b])
      if (order !== 0) return order * (directions[i] as 1 | -1)
    }
    return 0
  })
  return positions.map((position) => docs[position] as Document)
}

/**
 * Matching documents in sort/skip/limit order. The results are objects of `docs`: a find hands
 * them out through `handOut`.
 */
export function select(
  docs: Iterable<Document>,
  query: CompiledQuery,
  { sort, skip = 0, limit = 0 }: { sort?: SortSpec; skip?: number; limit?: number },
): Document[] {
  const sorting = sort !== undefined && Object.keys(sort).length > 0
  // Without a sort, the first skip+limit matches are the answer: stop looking there.
  const enough = sorting || limit <= 0 ? Infinity : skip + limit
  const matching: Document[] = []
  for (const doc of docs) {
    if (!query.test(doc)) continue
    matching.push(doc)
    if (matching.length >= enough) break
  }
  const ordered = sorting ? sorted(matching, sort) : matching
  return ordered.slice(skip, limit > 0 ? skip + limit : undefined)
}

function projectWithMingo(doc: Document, projection: Projection): Document {
  return new Query<Document>({}, baseOptions).find<Document>([doc], projection).all()[0] as Document
}

/**
 * How a read hands out a document it found: a copy as the projection shows it (the whole document
 * without one) that shares no object with the stored one, so the caller may change it. A simple
 * projection copies the fields it keeps and nothing else.
 */
export function handOut(projection: Projection | undefined): (doc: Document) => Document {
  if (!projection || Object.keys(projection).length === 0) return cloneDocument
  const simple = simpleProjector(projection)
  return (doc) => simple?.(doc) ?? cloneDocument(projectWithMingo(doc, projection))
}

/**
 * mingo's `$count` answers `{n: 0}` for no input where MongoDB answers nothing, so it is replaced by
 * the `$group`/`$project` pair MongoDB documents it as equivalent to.
 */
function withMongoCount(pipeline: Document[]): Document[] {
  return pipeline.flatMap((stage) =>
    Object.keys(stage).length === 1 && typeof stage.$count === 'string'
      ? [{ $group: { _id: null, [stage.$count]: { $sum: 1 } } }, { $project: { _id: 0 } }]
      : [stage],
  )
}

export function aggregate(docs: Document[], pipeline: Document[], collectionResolver: (name: string) => Document[]): Document[] {
  return new Aggregator(withMongoCount(pipeline), options(collectionResolver)).run<Document>(docs)
}
