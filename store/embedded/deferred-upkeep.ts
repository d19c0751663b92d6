/**
 * The deferred upkeep of a table's non-unique indexes (document-table.ts): a write only notes which
 * documents it changed, and those indexes catch up when a read plans on them. A unique index is kept
 * up to date by every write instead, since the write must be refused on a duplicate key.
 *
 * Most writes change fields that some index holds (an instance's tasks, status, dates), and most
 * indexes are read far less often than they are written: those of the instance list and the task
 * inbox are read by a person's query, while each instance is written at every step and its audit
 * records and notification record with it. A catch-up also files a document once for all the writes
 * it had since the last read, and a document that ends and leaves memory before any read is never
 * filed at all (docs/performance.md#deferred-index-upkeep).
 */
import type { Document } from '../port.js'
import { type IndexEntry, SecondaryIndex } from './secondary-index.js'

/**
 * At most so many documents await upkeep: past it, each write brings the longest-waiting ones up to
 * date, a few at a time, so the versions they hold do not pile up in memory and a first read after a
 * long quiet catches up at most this many.
 */
export const MAX_AWAITING_UPKEEP = 1024

export class DeferredUpkeep {
  /**
   * The documents the deferred indexes are behind on, each with the version whose entries those
   * indexes hold for it (null: they hold none, as for a document inserted since).
   */
  private readonly filedAs = new Map<string, Document | null>()

  get size(): number {
    return this.filedAs.size
  }

  /** A write changes the document; `filed` is the version the indexes hold, unless they are behind on it already. */
  changed(id: string, filed: Document | null): void {
    if (!this.filedAs.has(id)) this.filedAs.set(id, filed)
  }

  /**
   * The document leaves memory: answers the version the deferred indexes hold for it (null: none),
   * or undefined when they are not behind on it (they hold its current version); it is forgotten.
   */
  leaving(id: string): Document | null | undefined {
    const filed = this.filedAs.get(id)
    this.filedAs.delete(id)
    return filed
  }

  /**
   * Brings the indexes up to date with `current` (the table's documents) for the documents they are
   * behind on, the longest-waiting first: all of them, or the first `count`. `entryOf` gives a
   * version's entry in an index (the table keeps them per version).
   */
  catchUp(
    indexes: readonly SecondaryIndex[],
    current: ReadonlyMap<string, Document>,
    entryOf: (index: SecondaryIndex, doc: Document) => IndexEntry,
    count = Infinity,
  ): void {
    let done = 0
    for (const [id, filed] of this.filedAs) {
      if (done++ >= count) return
      this.filedAs.delete(id)
      const now = current.get(id)
      for (const index of indexes) {
        if (filed && now && index.sameFieldValues(filed, now)) continue
        const old = filed ? entryOf(index, filed) : null
        const next = now ? entryOf(index, now) : null
        if (SecondaryIndex.sameEntry(old, next)) continue
        index.delete(id, old)
        index.insert(id, next)
      }
    }
  }
}
