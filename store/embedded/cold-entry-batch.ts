/**
 * The cold documents' entries of an index being created, gathered for the journal: the keys SQLite
 * keeps in `cold_keys`, and the index fields found holding an array (`cold_arrays`). A non-unique
 * index over a long history saves them a batch at a time (document-table.ts `ensureIndex`), so the
 * memory a build takes does not grow with the history.
 */
import type { ColdArray, JournalOp } from './journal.js'
import type { IndexEntry } from './secondary-index.js'

/**
 * Entries per journal op of an index build, about a MB of keys. Each commit writes the index's pages
 * that it touched into the write-ahead log again: for 200,000 cold documents, batches of 2,048 took
 * 19.5 s, of 8,192 13.3 s, one transaction 12.3 s (with 280 MB more memory at its peak).
 */
export const BUILD_BATCH = 8192

export class ColdEntryBatch {
  private keys: Array<readonly [id: string, key: string]> = []
  private readonly arrays = new Set<number>()

  constructor(
    private readonly collection: string,
    private readonly indexName: string,
  ) {}

  get size(): number {
    return this.keys.length
  }

  add(id: string, entry: IndexEntry): void {
    for (const key of entry?.ordered ?? []) this.keys.push([id, key])
    entry?.arrays.forEach((array, field) => array && this.arrays.add(field))
  }

  /** The fields found holding an array so far, as `cold_arrays` rows. */
  arrayFields(): ColdArray[] {
    return [...this.arrays].map((field) => [this.indexName, field] as const)
  }

  /** The journal op saving the entries gathered since the last one (with the definition, when given), and a fresh start. */
  drain(indexSpec?: string): JournalOp {
    const coldKeys = this.keys
    this.keys = []
    return {
      collection: this.collection,
      indexName: this.indexName,
      ...(indexSpec === undefined ? {} : { indexSpec }),
      ...(coldKeys.length > 0 || this.arrays.size > 0 ? { coldKeys, arrays: this.arrayFields() } : {}),
    }
  }
}
