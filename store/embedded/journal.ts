/**
 * The SQLite file behind the embedded store. Memory is the working copy of the hot documents; this
 * is the durable copy of every document and the only copy of the cold ones (cold-tier.ts). WAL with
 * synchronous=NORMAL keeps every committed transaction across a process crash (only an OS crash or
 * power loss can lose the last ones), at a fraction of the cost of a full fsync per write.
 *
 * Layout: `documents` holds every document, `cold` = 1 for the ones that live only here (a rowid
 * table: a document of a few KB stays on its leaf page, where the key-ordered `WITHOUT ROWID` table
 * of layouts 1 and 2 kept at most about 1 KB of it and spilled the rest to overflow pages); `cold_keys`
 * holds the secondary-index entries of the cold documents (the in-memory indexes' ordered keys,
 * ordered-keys.ts, so SQLite orders them exactly as memory does); `cold_arrays` records which index
 * fields hold an array in some cold document (a range on such a field cannot be intersected);
 * `indexes` holds the index definitions. Only the journal writer's thread (journal-writer.ts) writes
 * documents and keys; the store's own thread reads with a connection of its own (cold-file.ts).
 */
import Database from 'better-sqlite3'

/** An index entry of a cold document: the index's name and one of the entry's ordered keys. */
export type ColdKey = readonly [indexName: string, key: string]

/**
 * One step of a journal batch: a document's new JSON (`text`), its removal (`text` null), an index
 * definition (`indexSpec`, the spec's JSON) to recreate at the next open, or an index's removal
 * (`indexSpec` null). A document stored `cold` comes with its index entries (`keys`);
 * `dropsColdKeys` removes the entries its previous version had, stored cold (document-table.ts
 * says when it may have). `coldKeys` (an index created on a collection with cold documents) are the
 * cold documents' entries of that index.
 */
export type JournalOp =
  | {
      collection: string
      id: string
      text: string | null
      cold?: boolean
      keys?: readonly ColdKey[]
      arrays?: readonly ColdArray[]
      dropsColdKeys?: true
    }
  | {
      collection: string
      indexName: string
      /** The definition to save, or null to drop the index; absent, the op only adds cold entries (an index being built). */
      indexSpec?: string | null
      coldKeys?: ReadonlyArray<readonly [id: string, key: string]>
      arrays?: readonly ColdArray[]
    }

/** An index field (by position) that holds an array in some cold document. */
export type ColdArray = readonly [indexName: string, field: number]

/**
 * The layout this code writes: 2 added the cold tier (`cold`, `cold_keys`, `cold_arrays`), 3 made
 * `documents` a rowid table.
 */
const LAYOUT_VERSION = 3

const DOCUMENTS_COLUMNS = '(collection TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, cold INTEGER NOT NULL DEFAULT 0)'

/**
 * Key strings as BLOBs SQLite orders exactly as JavaScript orders the strings: UTF-16 code units,
 * big-endian, compared byte by byte (TEXT would compare UTF-8, which orders surrogate pairs above
 * U+FFFF differently and would put them past `AFTER_PREFIX`).
 */
export function keyBlob(key: string): Buffer {
  return Buffer.from(key, 'utf16le').swap16()
}

/** The key string of a BLOB: its bytes are swapped in place to read it, and back (no copy per key read). */
export function keyOfBlob(blob: Buffer): string {
  const key = blob.swap16().toString('utf16le')
  blob.swap16()
  return key
}

/** Opens the database with the store's settings. */
export function openDatabase(file: string): Database.Database {
  const db = new Database(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('synchronous = NORMAL')
    return db
  } catch (err) {
    db.close()
    throw err
  }
}

/**
 * Creates the tables, or brings a data dir of an earlier layout to this one: a store written before
 * the cold tier has every document in `documents` without `cold`, and gets the column (every
 * document hot; the open moves the ones its rules say are cold, cold-file.ts); a `documents` table
 * of layout 1 or 2 (`WITHOUT ROWID`) is copied once into a rowid table. Idempotent, in one
 * transaction: an interrupted upgrade leaves the file as it was, and the next open does it again.
 */
export function prepareLayout(db: Database.Database): void {
  const rebuilt = db.transaction(() => {
    db.exec(`
      CREATE TABLE IF NOT EXISTS documents ${DOCUMENTS_COLUMNS};
      CREATE TABLE IF NOT EXISTS indexes (collection TEXT NOT NULL, name TEXT NOT NULL, spec TEXT NOT NULL,
        PRIMARY KEY (collection, name));
    `)
    const columns = db.prepare<[], { name: string }>('PRAGMA table_info(documents)').all()
    if (!columns.some((column) => column.name === 'cold')) db.exec('ALTER TABLE documents ADD COLUMN cold INTEGER NOT NULL DEFAULT 0')
    const rebuild = isWithoutRowid(db, 'documents')
    if (rebuild) rebuildDocumentsTable(db)
    db.exec(`
      CREATE UNIQUE INDEX IF NOT EXISTS documents_by_id ON documents (collection, id);
      CREATE INDEX IF NOT EXISTS documents_hot ON documents (collection, id) WHERE cold = 0;
      CREATE INDEX IF NOT EXISTS documents_cold ON documents (collection, id) WHERE cold = 1;
      CREATE TABLE IF NOT EXISTS cold_keys (collection TEXT NOT NULL, idx TEXT NOT NULL, key BLOB NOT NULL, id TEXT NOT NULL,
        PRIMARY KEY (collection, idx, key, id)) WITHOUT ROWID;
      CREATE INDEX IF NOT EXISTS cold_keys_by_id ON cold_keys (collection, id);
      CREATE TABLE IF NOT EXISTS cold_arrays (collection TEXT NOT NULL, idx TEXT NOT NULL, field INTEGER NOT NULL,
        PRIMARY KEY (collection, idx, field)) WITHOUT ROWID;
    `)
    db.pragma(`user_version = ${LAYOUT_VERSION}`)
    return rebuild
  })()
  // The copy went through the write-ahead log: move it into the file now and give the log's space back.
  if (rebuilt) db.pragma('wal_checkpoint(TRUNCATE)')
}

function isWithoutRowid(db: Database.Database, table: string): boolean {
  const sql = db.prepare<[string], string>("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table)
  return sql !== undefined && /WITHOUT\s+ROWID\s*$/i.test(sql)
}

/** Copies `documents` into a rowid table of the same columns, which takes its name (its indexes go with the old one). */
function rebuildDocumentsTable(db: Database.Database): void {
  db.exec(`
    CREATE TABLE documents_rebuilt ${DOCUMENTS_COLUMNS};
    INSERT INTO documents_rebuilt (collection, id, doc, cold) SELECT collection, id, doc, cold FROM documents ORDER BY collection, id;
    DROP TABLE documents;
    ALTER TABLE documents_rebuilt RENAME TO documents;
  `)
}

/**
 * The journal connection's `wal_autocheckpoint`, in pages: far above what the background checkpoints
 * (checkpointer.ts) let the log reach, so a commit copies the log itself only when they fall behind,
 * and then finds most of it copied.
 */
export const JOURNAL_CHECKPOINT_PAGES = 10_000

/** The journal writer thread's side: applies batches of ops, each in one transaction. */
export class JournalFile {
  private readonly db: Database.Database
  private readonly applyAll: (ops: readonly JournalOp[]) => void

  constructor(file: string) {
    // The store's thread prepared the layout before starting this thread (cold-file.ts).
    this.db = openDatabase(file)
    try {
      this.db.pragma(`wal_autocheckpoint = ${JOURNAL_CHECKPOINT_PAGES}`)
      const put = this.db.prepare<[string, string, string, number]>(
        // A rewrite of a document updates its row in place (a REPLACE would delete it and insert another).
        'INSERT INTO documents (collection, id, doc, cold) VALUES (?, ?, ?, ?) ' +
          'ON CONFLICT (collection, id) DO UPDATE SET doc = excluded.doc, cold = excluded.cold',
      )
      const remove = this.db.prepare<[string, string]>('DELETE FROM documents WHERE collection = ? AND id = ?')
      const removeKeys = this.db.prepare<[string, string]>('DELETE FROM cold_keys WHERE collection = ? AND id = ?')
      const putKey = this.db.prepare<[string, string, Buffer, string]>(
        'INSERT OR IGNORE INTO cold_keys (collection, idx, key, id) VALUES (?, ?, ?, ?)',
      )
      const putArray = this.db.prepare<[string, string, number]>(
        'INSERT OR IGNORE INTO cold_arrays (collection, idx, field) VALUES (?, ?, ?)',
      )
      const saveIndex = this.db.prepare<[string, string, string]>(
        'INSERT OR REPLACE INTO indexes (collection, name, spec) VALUES (?, ?, ?)',
      )
      const dropIndex = this.db.prepare<[string, string]>('DELETE FROM indexes WHERE collection = ? AND name = ?')
      const dropIndexKeys = this.db.prepare<[string, string]>('DELETE FROM cold_keys WHERE collection = ? AND idx = ?')
      const dropIndexArrays = this.db.prepare<[string, string]>('DELETE FROM cold_arrays WHERE collection = ? AND idx = ?')
      this.applyAll = this.db.transaction((ops: readonly JournalOp[]) => {
        for (const op of ops) {
          for (const [indexName, field] of op.arrays ?? []) putArray.run(op.collection, indexName, field)
          if ('indexName' in op) {
            if (op.indexSpec === null) {
              dropIndex.run(op.collection, op.indexName)
              dropIndexKeys.run(op.collection, op.indexName)
              dropIndexArrays.run(op.collection, op.indexName)
            } else if (op.indexSpec !== undefined) saveIndex.run(op.collection, op.indexName, op.indexSpec)
            for (const [id, key] of op.coldKeys ?? []) putKey.run(op.collection, op.indexName, keyBlob(key), id)
            continue
          }
          if (op.dropsColdKeys) removeKeys.run(op.collection, op.id)
          if (op.text === null) remove.run(op.collection, op.id)
          else {
            put.run(op.collection, op.id, op.text, op.cold ? 1 : 0)
            if (op.cold) for (const [indexName, key] of op.keys ?? []) putKey.run(op.collection, indexName, keyBlob(key), op.id)
          }
        }
      })
    } catch (err) {
      this.db.close()
      throw err
    }
  }

  /** All ops commit in one transaction, or none does. */
  apply(ops: readonly JournalOp[]): void {
    this.applyAll(ops)
  }

  close(): void {
    this.db.close()
  }
}
