/**
 * The SQLite file behind the embedded store. Memory is the working copy; this is the durable one,
 * written synchronously before a write is acknowledged. WAL with synchronous=NORMAL keeps every
 * committed transaction across a process crash (only an OS crash or power loss can lose the last
 * ones), at a fraction of the cost of a full fsync per write.
 */
import Database from 'better-sqlite3'
import { decodeDocument, encodeDocument } from './document-codec.js'
import type { IndexSpec } from './secondary-index.js'

/** One document's new state: its JSON, or null when it is deleted. */
export interface JournalEntry {
  id: string
  text: string | null
}

interface DocumentRow { collection: string; id: string; doc: string }
interface IndexRow { collection: string; spec: string }

export class Journal {
  private readonly db: Database.Database
  private readonly putStatement: Database.Statement<[string, string, string]>
  private readonly deleteStatement: Database.Statement<[string, string]>
  private readonly writeMany: (collection: string, entries: JournalEntry[]) => void

  constructor(file: string) {
    this.db = new Database(file)
    try {
      this.db.pragma('journal_mode = WAL')
      this.db.pragma('synchronous = NORMAL')
      this.db.exec(`
        CREATE TABLE IF NOT EXISTS documents (collection TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (collection, id)) WITHOUT ROWID;
        CREATE TABLE IF NOT EXISTS indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL, PRIMARY KEY (collection, name));
      `)
      this.putStatement = this.db.prepare('INSERT OR REPLACE INTO documents (collection, id, doc) VALUES (?, ?, ?)')
      this.deleteStatement = this.db.prepare('DELETE FROM documents WHERE collection = ? AND id = ?')
      this.writeMany = this.db.transaction((collection: string, entries: JournalEntry[]) => {
        for (const entry of entries) this.writeOne(collection, entry)
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

  /** All entries commit together or not at all. */
  write(collection: string, entries: JournalEntry[]): void {
    if (entries.length === 1) this.writeOne(collection, entries[0] as JournalEntry)
    else if (entries.length > 1) this.writeMany(collection, entries)
  }

  saveIndex(collection: string, spec: IndexSpec): void {
    this.db.prepare('INSERT OR REPLACE INTO indexes (collection, name, spec) VALUES (?, ?, ?)').run(collection, spec.name, encodeDocument({ ...spec }))
  }

  close(): void {
    this.db.close()
  }

  private writeOne(collection: string, entry: JournalEntry): void {
    if (entry.text === null) this.deleteStatement.run(collection, entry.id)
    else this.putStatement.run(collection, entry.id, entry.text)
  }
}
