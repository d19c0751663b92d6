/**
 * Which documents the embedded store keeps in SQLite only (docs/performance.md#memory-the-embedded-stores-cold-tier).
 *
 * A collection may have a cold rule; a document of it that the rule calls cold is written to SQLite
 * marked cold and, once that write is durable, leaves memory (and the in-memory indexes): reads find
 * it through SQLite's copy of its index entries. Every other document stays in memory as before. The
 * rule is data, not code, so the store can also tell from a filter that only hot documents can match
 * it (`{processStatus: 'running'}`) and leave SQLite alone for it.
 *
 * - `{ path, values }`: cold when the plain (array-free) value at `path` is one of `values`. For
 *   documents that end (process instances): their last state is read rarely, and never changes again
 *   unless someone reopens the instance, which makes it hot again. `hotOnlyIndexes` names the indexes
 *   that only reads pinning `path` to other values need (an instance's open tasks and their due dates:
 *   an ended instance has none): a document going cold gets no entries in them in SQLite, and a read
 *   of the cold documents never plans on them. A unique or TTL index keeps its cold entries whatever
 *   the rule names, since its checks and expiries read them.
 * - `{ always: true }`: every document is cold once durable, memory holds only the writes in flight.
 *   For append-only logs (activities) that are read by an indexed key and never updated. With
 *   `freshIds: true` its writers promise every insert an `_id` never used before (an ObjectId the
 *   engine makes), so an insert is not looked up among SQLite's cold rows: that read, on the store's
 *   thread while the journal writes, was the dearest part of appending a record.
 */
import type { Document, Filter } from '../port.js'
import type { IndexSpec } from './secondary-index.js'

export type ColdRule =
  | { readonly always: true; readonly freshIds?: true }
  | { readonly path: string; readonly values: readonly string[]; readonly hotOnlyIndexes?: readonly string[] }

/** The cold rule of a collection, by its name; undefined keeps the collection wholly in memory. */
export type ColdTier = (collection: string) => ColdRule | undefined

/** The plain value at a dotted path (undefined when an array or a non-object is on the way). */
function plainValueAt(doc: Document, path: string): unknown {
  let value: unknown = doc
  for (const segment of path.split('.')) {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.hasOwn(value, segment)) return undefined
    value = (value as Document)[segment]
  }
  return value
}

/** Whether the cold documents of a collection under `rule` have entries in the index (see `hotOnlyIndexes`). */
export function indexesColdDocuments(rule: ColdRule | undefined, spec: Pick<IndexSpec, 'name' | 'unique' | 'expireAfterSeconds'>): boolean {
  if (rule === undefined || 'always' in rule || spec.unique || spec.expireAfterSeconds !== undefined) return true
  return !(rule.hotOnlyIndexes ?? []).includes(spec.name)
}

export function isCold(rule: ColdRule, doc: Document): boolean {
  if ('always' in rule) return true
  const value = plainValueAt(doc, rule.path)
  return typeof value === 'string' && rule.values.includes(value)
}

/** The conditions a filter puts on one path, top level and inside `$and` (either must hold). */
function conditionsOn(filter: Filter, path: string): unknown[] {
  const found: unknown[] = []
  for (const [field, condition] of Object.entries(filter)) {
    if (field === path) found.push(condition)
    else if (field === '$and' && Array.isArray(condition)) {
      for (const clause of condition) if (typeof clause === 'object' && clause !== null) found.push(...conditionsOn(clause as Filter, path))
    }
  }
  return found
}

/** Does this condition on the rule's path exclude every cold value? */
function excludesCold(condition: unknown, coldValues: readonly string[]): boolean {
  if (typeof condition === 'string') return !coldValues.includes(condition)
  if (typeof condition === 'number' || typeof condition === 'boolean' || condition instanceof Date) return true
  if (typeof condition !== 'object' || condition === null || Array.isArray(condition)) return false
  const operators = condition as Record<string, unknown>
  // Every operator of the condition must hold, so one that excludes the cold values is enough.
  if ('$eq' in operators && excludesCold(operators.$eq, coldValues)) return true
  const inList = operators.$in
  if (Array.isArray(inList) && inList.every((value) => excludesCold(value, coldValues))) return true
  const notIn = operators.$nin
  if (Array.isArray(notIn) && coldValues.every((value) => notIn.includes(value))) return true
  return coldValues.length === 1 && operators.$ne === coldValues[0]
}

/**
 * True when no document the rule calls cold can match the filter: the filter pins the rule's path to
 * other values (`'running'`, `$in` of them, `$nin`/`$ne` of the cold ones). Conservative: false
 * whenever it cannot tell.
 */
export function matchesOnlyHot(rule: ColdRule, filter: Filter): boolean {
  if ('always' in rule) return false
  return conditionsOn(filter, rule.path).some((condition) => excludesCold(condition, rule.values))
}
