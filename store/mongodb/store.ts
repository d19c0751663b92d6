/**
 * The MongoDB store: the official driver, files in GridFS. Documents inserted without an `_id` get a
 * 24-hex string (pkFactory) like in the embedded store, and `undefined` fields are left out
 * (ignoreUndefined) as the embedded store's JSON leaves them out.
 */
import { type ClientSession, type Db, MongoClient } from 'mongodb'
import type { StoreLogger } from '../logger.js'
import { newObjectIdHex } from '../object-id.js'
import type { AtomicWrite, AtomicWriteResult, Collection, Document, Store } from '../port.js'
import { applyWrite, MongoCollection } from './collection.js'
import { GridFsFileStore } from './gridfs-file-store.js'

export interface MongoStoreOptions {
  uri: string
  /** Defaults to the database named in the URI. */
  dbName?: string
  logger?: StoreLogger
  /** `maxTimeMS` of every operation that takes a filter (MONGODB_MAX_TIME_MS). */
  maxTimeMs?: number
}

/** GridFS's own collections (default bucket `fs`) hold file bytes, not documents of the service. */
const GRIDFS_COLLECTIONS = new Set(['fs.files', 'fs.chunks'])

export class MongoStore implements Store {
  readonly kind = 'mongodb'
  readonly files: GridFsFileStore
  readonly db: Db
  private readonly client: MongoClient
  private readonly logger: StoreLogger | undefined
  /** Whether the deployment runs multi-document transactions (a replica set or a sharded cluster). */
  readonly transactions: boolean

  private constructor(
    client: MongoClient,
    db: Db,
    transactions: boolean,
    logger: StoreLogger | undefined,
    private readonly maxTimeMs: number | undefined,
  ) {
    this.client = client
    this.db = db
    this.transactions = transactions
    this.files = new GridFsFileStore(db)
    this.logger = logger
  }

  /** Connects (so a bad URI or an unreachable server fails here, not on the first request). */
  static async open({ uri, dbName, logger, maxTimeMs }: MongoStoreOptions): Promise<MongoStore> {
    const client = new MongoClient(uri, { pkFactory: { createPk: newObjectIdHex }, ignoreUndefined: true })
    await client.connect()
    const db = client.db(dbName)
    const hello = await db.admin().command({ hello: 1 })
    const transactions = typeof hello.setName === 'string' || hello.msg === 'isdbgrid'
    logger?.info({ database: db.databaseName, transactions }, 'MongoDB store connected')
    if (!transactions)
      logger?.warn(
        { database: db.databaseName },
        "standalone MongoDB server: a request's writes are applied in order, without a transaction",
      )
    return new MongoStore(client, db, transactions, logger, maxTimeMs)
  }

  /**
   * A transaction on a replica set or sharded cluster (retried by the driver on transient errors).
   * A standalone server has none: the writes are applied in order and the first failure stops the
   * rest, but the writes before it stay — callers put the write that may lose (a compare-and-set)
   * first, so losing it still changes nothing.
   */
  async applyAtomically(writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]> {
    const inOrder = async (session: ClientSession | undefined): Promise<AtomicWriteResult[]> => {
      const results: AtomicWriteResult[] = []
      for (const [index, write] of writes.entries()) results.push(await applyWrite(this.db, write, index, session))
      return results
    }
    if (!this.transactions) return inOrder(undefined)
    const session = this.client.startSession()
    try {
      return await session.withTransaction(() => inOrder(session))
    } finally {
      await session.endSession()
    }
  }

  collection<T extends object = Document>(name: string): Collection<T> {
    // The driver's collections are untyped here; T is the caller's promise about their shape.
    return new MongoCollection(this.db.collection(name), this.maxTimeMs) as unknown as Collection<T>
  }

  async listCollections(): Promise<string[]> {
    const infos = await this.db.listCollections({ type: 'collection' }, { nameOnly: true }).toArray()
    const names = infos.map((info) => info.name).filter((name) => !name.startsWith('system.') && !GRIDFS_COLLECTIONS.has(name))
    const holding = await Promise.all(
      names.map(async (name) => ((await this.db.collection(name).findOne({}, { projection: { _id: 1 } })) ? name : undefined)),
    )
    return holding.filter((name): name is string => name !== undefined).sort()
  }

  async close(): Promise<void> {
    await this.client.close()
    this.logger?.info({ database: this.db.databaseName }, 'MongoDB store closed')
  }
}
