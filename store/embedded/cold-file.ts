/**
 * The store thread's own connection to the SQLite file (WAL lets it read while the journal thread
 * writes): it reads the hot documents once at open, moves documents its rules call cold out of the
 * hot set there (the upgrade of a data dir written before the cold tier, or a rule that changed),
 * and afterwards answers the cold tier's reads. Every read after open is one indexed statement
 * returning at most PAGE rows, so none holds the thread for long; callers page through larger
 * answers (the journal thread never waits for them: WAL readers and the writer do not block).
 */
import type Database from 'better-sqlite3'
import { ColdFilters } from './cold-filters.js'
import { decodeDocument } from './document-codec.js'
import { entriesOfGroupedRow, type GroupedRow, groupedPageSql, type KeyEntry } from './grouped-key-pages.js'
import { type ColdArray, type ColdKey, keyBlob, keyOfBlob, openDatabase, prepareLayout } from './journal.js'
import type { IndexSpec } from './secondary-index.js'

/** Rows per read: enough to amortize a statement, few enough (tens of KB) to keep each read short. */
export const PAGE = 256

interface DocumentRow {
  collection: string
  id: string
  doc: string
}
interface IdDoc {
  id: string
  doc: string
}
interface KeyRow {
  id: string
  key: Buffer
}
interface EntryRow extends KeyRow {
  doc: string
}
type EntryPage<Row> = Database.Statement<[string, string, Buffer, Buffer | string, number], Row>
/** The page statements of a range read, by the bound each resumes from. */
type EntryPages<Row> = Record<PageBound, EntryPage<Row>>
type PageBound = 'from' | 'after' | 'ties' | 'below' | 'tiesBelow'
/** Reads a page with the statement for `page`, resuming at `key`; `bound` is the other end of the range, or the last tie's id. */
type PageReader<Row> = (page: PageBound, key: Buffer, bound: Buffer | string) => Row[]

/** A range of one index's cold entries: `from <= key < to`. */
export interface KeyRange {
  from: string
  to: string
}

/** What the open does with a hot row: keep it in memory, or make it cold with these index entries. */
export type HotRowVerdict = { keep: true } | { keep: false; keys: readonly ColdKey[]; arrays: readonly ColdArray[] }

export class ColdFile {
  /** Statements run after open: what the cold tier cost the store's thread (EmbeddedStore.coldTierReads). */
  reads = 0
  private readonly db: Database.Database
  private readonly byId: Database.Statement<[string, string], { doc: string }>
  private readonly idsAmong: Database.Statement<[string, string], { id: string }>
  private readonly coldExists: Database.Statement<[string], { one: number }>
  private readonly coldCount: Database.Statement<[string], { n: number }>
  private readonly scanPage: Database.Statement<[string, string, number], IdDoc>
  /** Pages of an index's cold entries with their documents, by the bound they resume from: see `range`. */
  private readonly entryPages: EntryPages<EntryRow>
  /** The same pages of the entries alone (`coveredRange`): each as one row (grouped-key-pages.ts), or entry by entry. */
  private readonly groupedKeyPages: EntryPages<GroupedRow>
  private readonly keyPages: EntryPages<KeyRow>
  private readonly keyHolders: Database.Statement<[string, string, Buffer], { id: string }>
  private readonly coldIdPage: Database.Statement<[string, string, number], string>
  private readonly indexKeyPage: Database.Statement<[string, string, Buffer, number], Buffer>
  private readonly indexKeyCount: Database.Statement<[string, string], number>
  /**
   * The collections whose cold ids are filtered in memory (`trackIds`, by `idFilterName`): a read by
   * id goes to SQLite only when the filter says maybe. The same for the keys of a unique index's cold
   * entries (`trackKeys`, by `keyFilterName`): a read or a uniqueness check of one whole key.
   */
  private readonly filters = new ColdFilters()

  constructor(file: string) {
    this.db = openDatabase(file)
    try {
      prepareLayout(this.db)
      this.byId = this.db.prepare('SELECT doc FROM documents WHERE collection = ? AND id = ? AND cold = 1')
      this.idsAmong = this.db.prepare(
        'SELECT id FROM documents WHERE collection = ? AND cold = 1 AND id IN (SELECT value FROM json_each(?))',
      )
      this.coldExists = this.db.prepare('SELECT 1 AS one FROM documents WHERE collection = ? AND cold = 1 LIMIT 1')
      this.coldCount = this.db.prepare('SELECT count(*) AS n FROM documents WHERE collection = ? AND cold = 1')
      this.scanPage = this.db.prepare('SELECT id, doc FROM documents WHERE collection = ? AND cold = 1 AND id > ? ORDER BY id LIMIT ?')
      // Every bound is a plain comparison on the primary key (collection, idx, key, id), so each page is one index seek.
      const pages = <Row>(select: string, grouped = false): EntryPages<Row> => {
        const page = (where: string, order: string): EntryPage<Row> => {
          const sql = `${select} WHERE k.collection = ? AND k.idx = ? AND ${where} ORDER BY ${order} LIMIT ?`
          return this.db.prepare(grouped ? groupedPageSql(sql) : sql)
        }
        return {
          from: page('k.key >= ? AND k.key < ?', 'k.key, k.id'),
          after: page('k.key > ? AND k.key < ?', 'k.key, k.id'),
          ties: page('k.key = ? AND k.id > ?', 'k.id'),
          below: page('k.key < ? AND k.key >= ?', 'k.key DESC, k.id DESC'),
          tiesBelow: page('k.key = ? AND k.id < ?', 'k.id DESC'),
        }
      }
      this.entryPages = pages(`SELECT k.id AS id, k.key AS key, d.doc AS doc FROM cold_keys k
          JOIN documents d ON d.collection = k.collection AND d.id = k.id AND d.cold = 1`)
      // A cold document's entries are written and removed with it, in one transaction (journal.ts): an entry's document is cold.
      const keysAlone = 'SELECT k.id AS id, k.key AS key FROM cold_keys k'
      this.keyPages = pages(keysAlone)
      this.groupedKeyPages = pages(keysAlone, true)
      this.keyHolders = this.db.prepare(`SELECT k.id AS id FROM cold_keys k
        JOIN documents d ON d.collection = k.collection AND d.id = k.id AND d.cold = 1
        WHERE k.collection = ? AND k.idx = ? AND k.key = ? LIMIT 16`)
      this.coldIdPage = this.db
        .prepare<[string, string, number], string>(
          'SELECT id FROM documents WHERE collection = ? AND cold = 1 AND id > ? ORDER BY id LIMIT ?',
        )
        .pluck()
      // A key repeated for several ids is read once: `key >` skips its other rows.
      this.indexKeyPage = this.db
        .prepare<[string, string, Buffer, number], Buffer>(
          'SELECT key FROM cold_keys WHERE collection = ? AND idx = ? AND key > ? ORDER BY key LIMIT ?',
        )
        .pluck()
      this.indexKeyCount = this.db
        .prepare<[string, string], number>('SELECT count(*) FROM cold_keys WHERE collection = ? AND idx = ?')
        .pluck()
    } catch (err) {
      this.db.close()
      throw err
    }
  }

  indexes(): Array<{ collection: string; spec: IndexSpec }> {
    const rows = this.db.prepare<[], { collection: string; spec: string }>('SELECT collection, spec FROM indexes ORDER BY rowid').all()
    return rows.map((row) => ({ collection: row.collection, spec: decodeDocument(row.spec) as unknown as IndexSpec }))
  }

  /** The index fields that hold an array in some cold document, as `indexName` → field positions. */
  coldArrays(): Array<{ collection: string; idx: string; field: number }> {
    return this.db.prepare<[], { collection: string; idx: string; field: number }>('SELECT collection, idx, field FROM cold_arrays').all()
  }

  /**
   * Every hot row, a page at a time, for `verdict` to keep in memory or to make cold; the ones made
   * cold are written page by page, so an interrupted open has moved some and the next one moves
   * the rest.
   */
  restoreHot(verdict: (collection: string, id: string, doc: string) => HotRowVerdict): void {
    const page = this.db.prepare<[string, string, number], DocumentRow>(
      'SELECT collection, id, doc FROM documents WHERE cold = 0 AND (collection, id) > (?, ?) ORDER BY collection, id LIMIT ?',
    )
    const markCold = this.db.prepare<[string, string]>('UPDATE documents SET cold = 1 WHERE collection = ? AND id = ?')
    const removeKeys = this.db.prepare<[string, string]>('DELETE FROM cold_keys WHERE collection = ? AND id = ?')
    const putKey = this.db.prepare<[string, string, Buffer, string]>(
      'INSERT OR IGNORE INTO cold_keys (collection, idx, key, id) VALUES (?, ?, ?, ?)',
    )
    const putArray = this.db.prepare<[string, string, number]>(
      'INSERT OR IGNORE INTO cold_arrays (collection, idx, field) VALUES (?, ?, ?)',
    )
    const demote = this.db.transaction(
      (rows: Array<{ collection: string; id: string; keys: readonly ColdKey[]; arrays: readonly ColdArray[] }>) => {
        for (const { collection, id, keys, arrays } of rows) {
          markCold.run(collection, id)
          this.noteCold(collection, id, keys)
          removeKeys.run(collection, id)
          for (const [indexName, key] of keys) putKey.run(collection, indexName, keyBlob(key), id)
          for (const [indexName, field] of arrays) putArray.run(collection, indexName, field)
        }
      },
    )
    let after = { collection: '', id: '' }
    for (;;) {
      const rows = page.all(after.collection, after.id, 4 * PAGE)
      const last = rows[rows.length - 1]
      if (!last) return
      const cold: Array<{ collection: string; id: string; keys: readonly ColdKey[]; arrays: readonly ColdArray[] }> = []
      for (const row of rows) {
        const decided = verdict(row.collection, row.id, row.doc)
        if (!decided.keep) cold.push({ collection: row.collection, id: row.id, keys: decided.keys, arrays: decided.arrays })
      }
      if (cold.length > 0) demote(cold)
      after = last
    }
  }

  /**
   * From now on, reads of the collection's documents by id skip SQLite for the ids no cold document
   * can have, once the filter of its cold ids is full: they are read in the background (the
   * `documents_cold` index alone, cold-filters.ts), and every document made cold from now on is added
   * (`noteCold`). For collections whose inserts bring ids that may be cold; not for those of fresh
   * ids only (their inserts are never looked up).
   */
  trackIds(collection: string): void {
    const name = idFilterName(collection)
    if (this.filters.has(name)) return
    this.filters.trackStored<string>(name, this.countCold(collection), (after, limit) =>
      this.coldIdPage.all(collection, after ?? '', limit).map((id) => ({ value: id, cursor: id })),
    )
  }

  /** A document of the collection is being made cold with these index entries: its id and keys may be read from SQLite from now on. */
  noteCold(collection: string, id: string, keys: readonly ColdKey[]): void {
    if (this.filters.size === 0) return
    this.filters.add(idFilterName(collection), id)
    for (const [indexName, key] of keys) this.filters.add(keyFilterName(collection, indexName), key)
  }

  /**
   * From now on, reads of one whole key of this unique index skip SQLite for the keys no cold entry
   * has: the index's cold keys are read into a filter in the background, and every document made
   * cold from now on adds its own (`noteCold`). `gathered`: the cold entries' keys of an index
   * created just now, which SQLite does not hold yet (DocumentTable.ensureIndex): its filter is full at once.
   */
  trackKeys(collection: string, indexName: string, gathered?: readonly string[]): void {
    const name = keyFilterName(collection, indexName)
    if (gathered) return this.filters.trackGiven(name, gathered)
    this.reads++
    this.filters.trackStored<Buffer>(name, this.indexKeyCount.get(collection, indexName) ?? 0, (after, limit) =>
      this.indexKeyPage.all(collection, indexName, after ?? Buffer.alloc(0), limit).map((key) => ({ value: keyOfBlob(key), cursor: key })),
    )
  }

  /** The index is dropped: its keys are no longer filtered (a later index of that name is tracked afresh). */
  untrackKeys(collection: string, indexName: string): void {
    this.filters.untrack(keyFilterName(collection, indexName))
  }

  /** False when no cold entry of the index has this key; true when one may (or the index's keys are not filtered yet). */
  mayHoldKey(collection: string, indexName: string, key: string): boolean {
    return this.filters.mayHold(keyFilterName(collection, indexName), key)
  }

  /** Resolves once the filters tracked so far hold everything SQLite held (`trackIds`, `trackKeys`). */
  filtersFilled(): Promise<void> {
    return this.filters.filled()
  }

  /** The cold document with this id, if any (its JSON). */
  get(collection: string, id: string): string | undefined {
    if (!this.mayBeCold(collection, id)) return undefined
    this.reads++
    return this.byId.get(collection, id)?.doc
  }

  /** Which of these ids cold documents of the collection have: one statement however many ids, none when the filter rules all out. */
  coldIdsAmong(collection: string, ids: readonly string[]): Set<string> {
    const candidates = ids.filter((id) => this.mayBeCold(collection, id))
    if (candidates.length === 0) return new Set()
    this.reads++
    if (candidates.length === 1) return this.byId.get(collection, candidates[0] as string) ? new Set(candidates) : new Set()
    return new Set(this.idsAmong.all(collection, JSON.stringify(candidates)).map((row) => row.id))
  }

  private mayBeCold(collection: string, id: string): boolean {
    return this.filters.mayHold(idFilterName(collection), id)
  }

  hasCold(collection: string): boolean {
    this.reads++
    return this.coldExists.get(collection) !== undefined
  }

  countCold(collection: string): number {
    this.reads++
    return this.coldCount.get(collection)?.n ?? 0
  }

  /** Every cold document of the collection, in id order. */
  *scan(collection: string): Generator<IdDoc> {
    for (const rows of this.scanPages(collection)) yield* rows
  }

  /** Every cold document of the collection, in id order, a page at a time (each page read when asked for). */
  *scanPages(collection: string): Generator<IdDoc[]> {
    let after = ''
    for (;;) {
      this.reads++
      const rows = this.scanPage.all(collection, after, PAGE)
      if (rows.length > 0) yield rows
      const last = rows[rows.length - 1]
      if (!last || rows.length < PAGE) return
      after = last.id
    }
  }

  /**
   * The cold documents with an entry of the index in the range, in key order, or the reverse (a
   * multikey document once per entry), with the entry's key.
   */
  *range(collection: string, indexName: string, range: KeyRange, descending = false): Generator<IdDoc & { key: string }> {
    const read: PageReader<EntryRow> = (page, key, bound) => this.page(this.entryPages[page], collection, indexName, key, bound)
    for (const row of this.pagesOf(read, (row) => row.key, range, descending)) yield { id: row.id, doc: row.doc, key: keyOfBlob(row.key) }
  }

  /** `range` without the documents: the entries' keys and ids alone, for a read the entries cover (covered.ts). */
  coveredRange(collection: string, indexName: string, range: KeyRange, descending = false): Generator<KeyEntry> {
    const read: PageReader<KeyEntry> = (page, key, bound) => {
      const row = this.page(this.groupedKeyPages[page], collection, indexName, key, bound)[0]
      const entries = row && entriesOfGroupedRow(row, descending)
      if (entries) return entries
      return this.page(this.keyPages[page], collection, indexName, key, bound).map((entry) => ({
        id: entry.id,
        key: keyOfBlob(entry.key),
      }))
    }
    return this.pagesOf(read, (entry) => keyBlob(entry.key), range, descending)
  }

  private page<Row>(statement: EntryPage<Row>, collection: string, indexName: string, key: Buffer, bound: Buffer | string): Row[] {
    this.reads++
    return statement.all(collection, indexName, key, bound, PAGE)
  }

  /**
   * The rows of a range read, a page at a time: each page resumes after the last entry read, first
   * with the rest of its key's entries (by id), then the keys beyond it.
   */
  private *pagesOf<Row extends { id: string }>(
    read: PageReader<Row>,
    keyOf: (row: Row) => Buffer,
    { from, to }: KeyRange,
    descending: boolean,
  ): Generator<Row> {
    const lower = keyBlob(from)
    const upper = keyBlob(to)
    let rows = descending ? read('below', upper, lower) : read('from', lower, upper)
    for (;;) {
      yield* rows
      const last = rows[rows.length - 1]
      if (!last || rows.length < PAGE) return
      const lastKey = keyOf(last)
      let ties = rows
      let lastTie = last
      while (ties.length === PAGE) {
        ties = read(descending ? 'tiesBelow' : 'ties', lastKey, lastTie.id)
        yield* ties
        lastTie = ties[ties.length - 1] ?? lastTie
      }
      rows = descending ? read('below', lastKey, lower) : read('after', lastKey, upper)
    }
  }

  /** The ids of the cold documents holding this exact key in the index (a unique index's whole key). */
  holdersOf(collection: string, indexName: string, key: string): string[] {
    if (!this.mayHoldKey(collection, indexName, key)) return []
    this.reads++
    return this.keyHolders.all(collection, indexName, keyBlob(key)).map((row) => row.id)
  }

  close(): void {
    this.filters.close()
    this.db.close()
  }
}

/** The name a collection's filter of cold ids is kept under. */
function idFilterName(collection: string): string {
  return `ids\0${collection}`
}

/** The name a unique index's filter of cold keys is kept under. */
function keyFilterName(collection: string, indexName: string): string {
  return `keys\0${collection}\0${indexName}`
}
