/**
 * The cold documents' entries of an index being created (DocumentTable.ensureIndex), for SQLite: the
 * keys it keeps in `cold_keys`, and the index fields found holding an array (`cold_arrays`). A unique
 * index checks every cold document before it exists; any other saves their entries a batch at a
 * time, before its definition, so the memory a build takes does not grow with the history.
 */
import { decodeDocument } from './document-codec.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import type { ColdArray, JournalOp } from './journal.js'
import type { IndexEntry, SecondaryIndex } from './secondary-index.js'

/**
 * Entries per journal op of an index build, about a MB of keys. Each commit writes the index's pages
 * that it touched into the write-ahead log again: for 200,000 cold documents, batches of 2,048 took
 * 19.5 s, of 8,192 13.3 s, one transaction 12.3 s (with 280 MB more memory at its peak).
 */
export const BUILD_BATCH = 8192

/** The gathered entries of one index. */
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

  /** The keys gathered since the last drain. */
  gatheredKeys(): string[] {
    return this.keys.map(([, key]) => key)
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

/** The collection's cold documents, as a build reads them. */
export interface ColdRows {
  /** Every cold document, a page at a time, each page read when asked for. */
  pages(): Iterable<ReadonlyArray<{ id: string; doc: string }>>
  /** Is SQLite's copy of this id out of date (memory has the document, or is deleting it)? */
  shadowed(id: string): boolean
}

/** Gathers the cold documents' entries of a unique index, checked for uniqueness against memory and each other. */
export function gatherUniqueColdEntries(index: SecondaryIndex, rows: ColdRows, entries: ColdEntryBatch): void {
  const coldUnique = new Set<string>()
  for (const page of rows.pages()) {
    for (const row of page) {
      if (rows.shadowed(row.id)) continue
      const doc = decodeDocument(row.doc)
      const entry = index.entryOf(doc)
      index.assertUnique(row.id, entry, doc)
      for (const key of entry?.unique ?? []) {
        if (coldUnique.has(key)) index.duplicateKey(doc)
        coldUnique.add(key)
      }
      entries.add(row.id, entry)
    }
  }
}

/**
 * Saves the cold documents' entries of a new index a batch at a time (the caller then saves the
 * definition): the index is in memory meanwhile, so every write also saves its entries, and cold
 * reads do not plan on it until it is complete. A page of documents is read and its entries handed
 * to the journal with no wait in between, so none is taken from a copy a write has replaced since,
 * and a write made meanwhile commits after them. A build that stops half way leaves entries with no
 * definition, which reads never consult, and the next one saves them again. Stops when `wanted`
 * turns false (the index was dropped).
 */
export async function saveColdEntries(
  index: SecondaryIndex,
  rows: ColdRows,
  entries: ColdEntryBatch,
  save: (op: JournalOp) => Promise<void>,
  wanted: () => boolean,
): Promise<void> {
  // One batch commits while the next is gathered.
  let saving: Promise<void> | undefined
  for (const page of rows.pages()) {
    if (!wanted()) throw new StoreServerError(ErrorCodes.IndexBuildAborted, 'Index build aborted: the index was dropped')
    for (const row of page) if (!rows.shadowed(row.id)) entries.add(row.id, index.entryOf(decodeDocument(row.doc)))
    if (entries.size < BUILD_BATCH) continue
    const previous = saving
    saving = save(entries.drain())
    // Awaited next time round; a failure meanwhile is not an unhandled rejection.
    saving.catch(() => undefined)
    await previous
  }
  await Promise.all([saving, save(entries.drain())])
}
