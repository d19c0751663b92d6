/**
 * The SQLite file behind the embedded store. Memory is the working copy; this is the durable one.
 * WAL with synchronous=NORMAL keeps every committed transaction across a process crash (only an OS
 * crash or power loss can lose the last ones), at a fraction of the cost of a full fsync per write.
 * The store reads it once at open, on its own thread; from then on only the journal writer's thread
 * (journal-writer.ts) writes to it.
 */
import Database from 'better-sqlite3'
import { decodeDocument } from './document-codec.js'
import type { IndexSpec } from './secondary-index.js'

/**
 * One step of a journal batch: a document's new JSON (`text`), its removal (`text` null), an index
 * definition (`indexSpec`, the spec's JSON) to recreate at the next open, or an index's removal
 * (`indexSpec` null).
 */
export type JournalOp =
  { collection: string; id: string; text: string | null } | { collection: string; indexName: string; indexSpec: string | null }

interface DocumentRow {
  collection: string
  id: string
  doc: string
}
interface IndexRow {
  collection: string
  spec: string
}

export class JournalFile {
  private readonly db: Database.Database
  private readonly applyAll: (ops: readonly JournalOp[]) => void

  constructor(file: string) {
    this.db = new Database(file)
    try {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma('synchronous = NORMAL')
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS documents (collection TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL,
          PRIMARY KEY (collection, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL,
          PRIMARY KEY (collection, name));
      `)
      const put = this.db.prepare<[string, string, string]>('INSERT OR REPLACE INTO documents (collection, id, doc) VALUES (?, ?, ?)')
      const remove = this.db.prepare<[string, string]>('DELETE FROM documents WHERE collection = ? AND id = ?')
      const saveIndex = this.db.prepare<[string, string, string]>(
        'INSERT OR REPLACE INTO indexes (collection, name, spec) VALUES (?, ?, ?)',
      )
      const dropIndex = this.db.prepare<[string, string]>('DELETE FROM indexes WHERE collection = ? AND name = ?')
      this.applyAll = this.db.transaction((ops: readonly JournalOp[]) => {
        for (const op of ops) {
          if ('indexSpec' in op) {
            if (op.indexSpec === null) dropIndex.run(op.collection, op.indexName)
            else saveIndex.run(op.collection, op.indexName, op.indexSpec)
          } else if (op.text === null) remove.run(op.collection, op.id)
          else put.run(op.collection, op.id, op.text)
        }
      })
    } catch (err) {
      this.db.close()
      throw err
    }
  }

  documents(): IterableIterator<DocumentRow> {
    return this.db.prepare<[], DocumentRow>('SELECT collection, id, doc FROM documents').iterate()
  }

  indexes(): Array<{ collection: string; spec: IndexSpec }> {
    const rows = this.db.prepare<[], IndexRow>('SELECT collection, spec FROM indexes ORDER BY rowid').all()
    return rows.map((row) => ({ collection: row.collection, spec: decodeDocument(row.spec) as unknown as IndexSpec }))
  }

  /** All ops commit in one transaction, or none does. */
  apply(ops: readonly JournalOp[]): void {
    this.applyAll(ops)
  }

  close(): void {
    this.db.close()
  }
}
