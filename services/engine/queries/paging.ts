/**
 * Paging of the queries whose items live inside instances (open tasks, failed threads) or are the
 * instances themselves (docs/reference/queries.md#paging). The order is the instances' by a stored,
 * indexed date and their id, newest first, then each instance's items by their own date and id,
 * newest first; the cursor is the position of the last item a page gave (lib/paging/cursor.ts), so
 * the next page is read through the same index from that instance on.
 */
import { decodeCursor, encodeCursor } from '../../../lib/paging/cursor.js'
import type { Filter } from '../../../store/port.js'

export const DEFAULT_PAGE_SIZE = 50

/** Where a page ended: the instance's sort date and id, then the item's sort key and id. */
export interface PagePosition {
  instanceAt: Date
  instanceId: string
  itemKey: string
  itemId: string
}

export function encodePosition(position: PagePosition): string {
  return encodeCursor([position.instanceAt.toISOString(), position.instanceId, position.itemKey, position.itemId])
}

/** The position a cursor names, or undefined when it is not one this engine issued. */
export function decodePosition(cursor: string): PagePosition | undefined {
  const parts = decodeCursor(cursor, 4)
  if (!parts) return undefined
  const [at, instanceId, itemKey, itemId] = parts as [string, string, string, string]
  const instanceAt = new Date(at)
  if (Number.isNaN(instanceAt.getTime()) || instanceAt.toISOString() !== at || instanceId === '') return undefined
  return { instanceAt, instanceId, itemKey, itemId }
}

/**
 * The `$and` clauses selecting the instances at or after `position` in the order by `field` (descending)
 * then `_id` (descending). The range on `field` alone is repeated outside the `$or` so that an index
 * on the query's equality fields followed by `field` bounds the read (the embedded store plans on
 * it; MongoDB on both).
 */
export function fromPosition(field: string, position: PagePosition | undefined): Filter[] {
  if (!position) return []
  const at = position.instanceAt
  return [{ [field]: { $lte: at } }, { $or: [{ [field]: { $lt: at } }, { [field]: at, _id: { $lte: position.instanceId } }] }]
}

/** How many instances to read for a page of `limit` items: each holds at least one, but the cursor's own may have none left. */
export function instancesToRead(limit: number): number {
  return limit + 2
}

/** One item of an instance, with what orders it within the instance. */
export interface Keyed<T> {
  key: string
  id: string
  item: T
}

function before(a: { key: string; id: string }, b: { key: string; id: string }): boolean {
  return a.key < b.key || (a.key === b.key && a.id < b.id)
}

/**
 * The page of items of `instances` (read in page order, `instancesToRead(limit)` at most, each with
 * at least one item) after `position`, and the position of its last item when more follow.
 */
export function pageOf<S extends { _id: string }, T>(
  instances: readonly S[],
  instanceAt: (instance: S) => Date,
  itemsOf: (instance: S) => Array<Keyed<T>>,
  position: PagePosition | undefined,
  limit: number,
): { items: T[]; next: PagePosition | null } {
  const items: T[] = []
  let last: PagePosition | undefined
  for (const instance of instances) {
    const at = instanceAt(instance)
    const resumed = position !== undefined && instance._id === position.instanceId && at.getTime() === position.instanceAt.getTime()
    const keyed = itemsOf(instance)
      .filter((entry) => !resumed || before(entry, { key: position.itemKey, id: position.itemId }))
      .sort((a, b) => (before(a, b) ? 1 : before(b, a) ? -1 : 0))
    for (const entry of keyed) {
      if (items.length === limit) return { items, next: last ?? null }
      items.push(entry.item)
      last = { instanceAt: at, instanceId: instance._id, itemKey: entry.key, itemId: entry.id }
    }
  }
  // Fewer instances than asked for: the order has ended. Otherwise the page is short only when some
  // instance lost its items between the index and the read; go on after the last one given.
  const ended = instances.length < instancesToRead(limit)
  return { items, next: ended || !last ? null : last }
}
