/**
 * MongoDB query, update, projection and aggregation semantics for the embedded store: mingo, with the
 * options every call shares (scripts off: `$where`, `$function`, `$accumulator` must never run code
 * that came in a request; MongoDB's strict semantics; no cloning, the callers clone exactly what they
 * hand out), short-cut by fast-paths.ts for the hot simple shapes.
 */
import { cloneDocument } from './document-codec.js'
import { Aggregator, Query, update } from 'mingo'
import type { Modifier } from 'mingo/updater'
import type { Criteria, Options } from 'mingo/types'
import { compare, resolve } from 'mingo/util'
import type { Document, Filter, Projection, SortSpec, UpdateFilter } from '../port.js'
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

export function compileQuery(filter: Filter): CompiledQuery {
  const simple = simpleFilterMatcher(filter)
  return simple ? { test: simple } : new Query<Document>(filter as Criteria<Document>, baseOptions)
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
  const changed = update(after, modifier as Modifier<Document>, undefined, (usesPositional(modifier) ? filter : undefined) as Criteria<Document> | undefined, {
    cloneMode: 'deep',
    queryOptions: baseOptions,
  })
  return { after, changed }
}

/**
 * Sorted as mingo's `$sort` sorts (its value order; ties keep their order), but on sort keys read
 * once per document: mingo's own sort groups by hashed values and takes ~50 ms for 10,000 documents.
 */
function sorted(docs: Document[], sort: SortSpec): Document[] {
  const fields = Object.entries(sort)
  const keyed = docs.map((doc) => ({ doc, keys: fields.map(([field]) => resolve(doc, field)) }))
  keyed.sort((a, b) => {
    for (let i = 0; i < fields.length; i++) {
      const order = compare(a.keys[i], b.keys[i])
      if (order !== 0) return order * (fields[i] as [string, 1 | -1])[1]
    }
    return 0
  })
  return keyed.map(({ doc }) => doc)
}

/**
 * Matching documents in sort/skip/limit order, projected; only the returned page is projected. The
 * results may share objects with `docs`.
 */
export function select(
  docs: Iterable<Document>,
  query: CompiledQuery,
  { sort, skip = 0, limit = 0, projection }: { sort?: SortSpec; skip?: number; limit?: number; projection?: Projection },
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
  const page = ordered.slice(skip, limit > 0 ? skip + limit : undefined)
  if (!projection || Object.keys(projection).length === 0) return page
  const simple = simpleProjector(projection)
  return page.map((doc) => simple?.(doc) ?? projectWithMingo(doc, projection))
}

function projectWithMingo(doc: Document, projection: Projection): Document {
  return new Query<Document>({}, baseOptions).find<Document>([doc], projection).all()[0] as Document
}

export function project(doc: Document, projection: Projection): Document {
  return simpleProjector(projection)?.(doc) ?? projectWithMingo(doc, projection)
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

export function aggregate(
  docs: Document[],
  pipeline: Document[],
  collectionResolver: (name: string) => Document[],
): Document[] {
  return new Aggregator(withMongoCount(pipeline), options(collectionResolver)).run<Document>(docs)
}
