/**
 * The embedded store: documents in memory with MongoDB semantics (mingo), every acknowledged write
 * durable in SQLite (written on the journal's own thread) before its call resolves, files under
 * `<dataDir>/files`, and the data dir locked to this process. Documents the cold tier's rules name
 * (cold-tier.ts; the service's are `coldRuleOf` in store/collections.ts) live in SQLite only once durable.
 */
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import { type AtomicWrite, type AtomicWriteResult, type Collection, type Document, type Store, UnmatchedWriteError } from '../port.js'
import { coldRuleOf } from '../collections.js'
import type { StoreLogger } from '../logger.js'
import { ColdFile } from './cold-file.js'
import type { ColdTier } from './cold-tier.js'
import { EmbeddedCollection } from './collection.js'
import { lockDataDir, type DataDirLock } from './data-dir-lock.js'
import { cloneDocument } from './document-codec.js'
import { DocumentTable } from './document-table.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import { keyOf } from './index-keys.js'
import { DirFileStore } from './file-store.js'
import type { JournalOp } from './journal.js'
import { type JournalCommitListener, JournalWriter } from './journal-writer.js'

export const DATABASE_FILE = 'store.sqlite'
export const FILES_DIR = 'files'
const TTL_SWEEP_INTERVAL_MS = 30_000

export interface EmbeddedStoreOptions {
  dataDir: string
  logger?: StoreLogger
  /** Which documents live in SQLite only (cold-tier.ts); the service's rules (store/collections.ts `coldRuleOf`) when absent. */
  coldTier?: ColdTier
}

function assertCollectionName(name: string): void {
  if (name.length === 0 || name.includes('$') || name.includes('\0') || name.startsWith('system.')) {
    throw new StoreServerError(ErrorCodes.InvalidNamespace, `Invalid collection name: ${JSON.stringify(name)}`)
  }
}

export class EmbeddedStore implements Store {
  readonly kind = 'embedded'
  readonly files: DirFileStore
  readonly dataDir: string
  private readonly journal: JournalWriter
  private readonly coldFile: ColdFile
  private readonly coldTier: ColdTier
  private readonly lock: DataDirLock
  private readonly logger: StoreLogger | undefined
  private readonly tables = new Map<string, DocumentTable>()
  private readonly collections = new Map<string, EmbeddedCollection>()
  private readonly ttlTimer: NodeJS.Timeout
  private closed = false

  private constructor(dataDir: string, lock: DataDirLock, coldFile: ColdFile, coldTier: ColdTier, logger: StoreLogger | undefined) {
    this.dataDir = dataDir
    this.lock = lock
    this.coldFile = coldFile
    this.coldTier = coldTier
    this.logger = logger
    // The journal thread writes nothing before the first batch, which comes after the restore below.
    this.journal = new JournalWriter(join(dataDir, DATABASE_FILE))
    // Only hot rows are read, and the ids of cold ones for the tables' filters (cold-ids.ts): start-up reads
    // no cold document. Documents the rules call cold and that are still hot (a data dir written before
    // the cold tier) are made cold here, page by page.
    for (const { collection, spec } of coldFile.indexes()) this.table(collection).restoreIndex(spec)
    for (const { collection, idx, field } of coldFile.coldArrays()) this.table(collection).restoreColdArray(idx, field)
    coldFile.restoreHot((collection, id, doc) => this.table(collection).restoreRow(id, doc))
    this.files = new DirFileStore(join(dataDir, FILES_DIR))
    this.ttlTimer = setInterval(() => this.sweepExpiredLogged(), TTL_SWEEP_INTERVAL_MS)
    this.ttlTimer.unref()
  }

  /** Opens (creating if needed) the store in `dataDir`; fails when another store has it open. */
  static open({ dataDir, logger, coldTier = coldRuleOf }: EmbeddedStoreOptions): EmbeddedStore {
    const started = Date.now()
    mkdirSync(dataDir, { recursive: true })
    const lock = lockDataDir(dataDir)
    let coldFile: ColdFile | undefined
    try {
      coldFile = new ColdFile(join(dataDir, DATABASE_FILE))
      const store = new EmbeddedStore(dataDir, lock, coldFile, coldTier, logger)
      let hotDocuments = 0
      for (const table of store.tables.values()) hotDocuments += table.docs.size
      logger?.info({ dataDir, collections: store.tables.size, hotDocuments, ms: Date.now() - started }, 'embedded store opened')
      return store
    } catch (err) {
      coldFile?.close()
      lock.release()
      throw err
    }
  }

  /** How many documents of the collection are in memory (the rest, if any, are in the cold tier only). */
  hotDocuments(collection: string): number {
    return this.tables.get(collection)?.docs.size ?? 0
  }

  /** How many SQLite reads the cold tier has made since open (each one indexed, at most a page of rows). */
  get coldTierReads(): number {
    return this.coldFile.reads
  }

  /**
   * Resolves once the cold tier's filters of ids and keys hold what SQLite held at open: they fill in
   * the background (cold-filters.ts), and until then the reads they would spare go to SQLite.
   */
  coldFiltersFilled(): Promise<void> {
    return this.coldFile.filtersFilled()
  }

  observeJournal(listener: JournalCommitListener): void {
    this.journal.onCommit(listener)
  }

  /** The object memory holds for the document: a write swaps in a new one, never changes it (document-table.ts). */
  versionToken(collection: string, id: string): unknown {
    return this.tables.get(collection)?.docs.get(keyOf(id))
  }

  heldDocument(collection: string, id: string): Readonly<Document> | undefined {
    this.assertOpen()
    return this.tables.get(collection)?.docs.get(keyOf(id))
  }

  collection<T extends object = Document>(name: string): Collection<T> {
    // The store holds untyped documents; T is the caller's promise about their shape, as with the driver.
    return this.embeddedCollection(name) as unknown as Collection<T>
  }

  /**
   * Every write is applied to memory in turn, synchronously (no other call runs in between), and
   * the first failure undoes the ones before it; then all of them go to the journal as one entry,
   * so SQLite commits them in one transaction, and if it cannot, all are undone together.
   */
  async applyAtomically(writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]> {
    this.assertOpen()
    const results: AtomicWriteResult[] = []
    const ops: JournalOp[] = []
    const reverts: Array<() => void> = []
    const settles: Array<() => void> = []
    const revertAll = (): void => {
      for (const revert of [...reverts].reverse()) revert()
    }
    try {
      writes.forEach((write, index) => {
        const collection = this.embeddedCollection(write.collection)
        const { changes, result } = collection.stage(write)
        if ('mustMatch' in write && write.mustMatch && (result as { matchedCount: number }).matchedCount === 0) {
          throw new UnmatchedWriteError(write.collection, index)
        }
        if (changes.length > 0) {
          const applied = this.table(write.collection).apply(changes)
          ops.push(...applied.ops)
          reverts.push(applied.revert)
          settles.push(applied.settle)
        }
        results.push(result)
      })
    } catch (err) {
      revertAll()
      throw err
    }
    if (ops.length > 0) {
      await this.journal.append(ops, revertAll)
      for (const settle of settles) settle()
    }
    return results
  }

  private embeddedCollection(name: string): EmbeddedCollection {
    let collection = this.collections.get(name)
    if (!collection) {
      assertCollectionName(name)
      collection = new EmbeddedCollection(this.table(name), {
        assertOpen: () => this.assertOpen(),
        documentsOf: (other) => [...(this.tables.get(other)?.allDocuments() ?? [])].map((doc) => cloneDocument(doc)),
      })
      this.collections.set(name, collection)
    }
    return collection
  }

  async listCollections(): Promise<string[]> {
    this.assertOpen()
    return [...this.tables.values()]
      .filter((table) => table.hasDocuments())
      .map((table) => table.name)
      .sort()
  }

  /**
   * Deletes every document whose TTL index says it has expired at `now`; resolves to how many once
   * their removal is durable. Runs by itself every 30 s; tests call it directly (with a `now` in the
   * future instead of waiting).
   */
  async sweepExpired(now: Date = new Date()): Promise<number> {
    this.assertOpen()
    let removed = 0
    const durable: Array<Promise<void>> = []
    for (const table of this.tables.values()) {
      const expired = table.expire(now)
      removed += expired.removed
      durable.push(expired.durable)
    }
    await Promise.all(durable)
    return removed
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    clearInterval(this.ttlTimer)
    try {
      await this.journal.close()
    } finally {
      this.coldFile.close()
      this.lock.release()
    }
    this.logger?.info({ dataDir: this.dataDir }, 'embedded store closed')
  }

  private sweepExpiredLogged(): void {
    this.sweepExpired().then(
      (removed) => {
        if (removed > 0) this.logger?.info({ removed }, 'expired documents removed')
      },
      (err: unknown) => this.logger?.warn({ err }, 'TTL sweep failed'),
    )
  }

  private table(name: string): DocumentTable {
    let table = this.tables.get(name)
    if (!table) {
      const rule = this.coldTier(name)
      // A collection without a rule may still have cold documents from when it had one: they are
      // read, and leave the cold tier when written.
      const cold = rule || this.coldFile.hasCold(name) ? { file: this.coldFile, rule, logger: this.logger } : undefined
      table = new DocumentTable(name, this.journal, cold)
      this.tables.set(name, table)
    }
    return table
  }

  private assertOpen(): void {
    if (this.closed) throw new Error(`The embedded store in ${this.dataDir} is closed`)
  }
}
