/**
 * The store port: the subset of the official MongoDB driver's API that the service uses, with the
 * driver's own method names and option names. Repositories are written once against it; the
 * embedded store (mingo + SQLite) and the MongoDB adapter both implement it and must give the same
 * results (see contract.test.ts).
 */
import type { Readable } from 'node:stream'

export type Document = Record<string, unknown>
/** A MongoDB query document (`{ field: value }`, `{ field: { $gt: 1 } }`, `$and`, ...). */
export type Filter = Record<string, unknown>
/** A MongoDB update document (`$set`, `$unset`, `$inc`, `$push`, `$pull`, `$addToSet`, `$setOnInsert`, ...). */
export type UpdateFilter = Record<string, unknown>
export type SortSpec = Record<string, 1 | -1>
export type Projection = Record<string, 0 | 1 | boolean>

export interface FindOptions extends ScanOptions {
  sort?: SortSpec
  skip?: number
  limit?: number
  projection?: Projection
}

/**
 * Not a driver option: bounds the documents a call examines where the process evaluates filters
 * itself (the embedded store, on the calling thread); past it the call fails with
 * ScanBudgetExceededError. MongoDB evaluates filters in its server, bounded by `maxTimeMS`, and
 * ignores it.
 */
export interface ScanOptions {
  maxExamined?: number
}

export interface FindOneOptions {
  sort?: SortSpec
  projection?: Projection
}

export interface UpdateOptions {
  upsert?: boolean
}

export interface FindOneAndUpdateOptions {
  upsert?: boolean
  /** 'before' (the driver's default) or 'after' */
  returnDocument?: 'before' | 'after'
  sort?: SortSpec
  projection?: Projection
}

export interface IndexOptions {
  unique?: boolean
  name?: string
  /** Documents are removed this many seconds after the indexed date field (MongoDB TTL index). */
  expireAfterSeconds?: number
  /** Only documents matching this filter are indexed (and checked for uniqueness). */
  partialFilterExpression?: Filter
}

export interface InsertOneResult {
  acknowledged: boolean
  insertedId: unknown
}
export interface InsertManyResult {
  acknowledged: boolean
  insertedCount: number
}
export interface UpdateResult {
  acknowledged: boolean
  matchedCount: number
  modifiedCount: number
  upsertedCount: number
  upsertedId: unknown
}
export interface DeleteResult {
  acknowledged: boolean
  deletedCount: number
}

export interface Cursor<T> {
  toArray(): Promise<T[]>
}

export interface Collection<T extends object = Document> {
  readonly collectionName: string
  insertOne(doc: T): Promise<InsertOneResult>
  insertMany(docs: T[]): Promise<InsertManyResult>
  findOne(filter: Filter, options?: FindOneOptions): Promise<T | null>
  find(filter: Filter, options?: FindOptions): Cursor<T>
  updateOne(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult>
  updateMany(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult>
  replaceOne(filter: Filter, replacement: T, options?: UpdateOptions): Promise<UpdateResult>
  /** Resolves to the document (or null), like the driver's default `includeResultMetadata: false`. */
  findOneAndUpdate(filter: Filter, update: UpdateFilter, options?: FindOneAndUpdateOptions): Promise<T | null>
  deleteOne(filter: Filter): Promise<DeleteResult>
  deleteMany(filter: Filter): Promise<DeleteResult>
  countDocuments(filter?: Filter, options?: ScanOptions): Promise<number>
  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R>
  createIndex(keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<string>
  /**
   * Drops the index of that name; resolves false when there is none (or no such collection), so
   * replacing an index is re-runnable. The driver's `dropIndex`, without its not-found errors.
   */
  dropIndex(name: string): Promise<boolean>
}

/** Where uploaded file bytes live: GridFS with MongoDB, `DATA_DIR/files` with the embedded store. */
export interface FileStore {
  /** Streams the bytes in; resolves once they are durable. Never buffers the whole file. */
  put(source: Readable, meta: { fileName: string; contentType: string }): Promise<StoredFile>
  /** A readable stream of the bytes, or null when the handle is unknown. */
  get(storageHandle: string): Promise<{ stream: Readable; size: number; fileName: string; contentType: string } | null>
  /** Resolves true when something was removed. */
  delete(storageHandle: string): Promise<boolean>
}

export interface StoredFile {
  storageHandle: string
  size: number
}

/**
 * One write of an atomic batch (`Store.applyAtomically`), with the semantics of the collection
 * method it names. `mustMatch`: the whole batch fails (UnmatchedWriteError) unless the filter
 * matched a document — a compare-and-set that lost makes the batch change nothing.
 */
export type AtomicWrite =
  | { collection: string; kind: 'insertOne'; doc: Document }
  | { collection: string; kind: 'updateOne' | 'updateMany'; filter: Filter; update: UpdateFilter; upsert?: boolean; mustMatch?: boolean }
  | { collection: string; kind: 'deleteMany'; filter: Filter }
  /** The whole document replaced (or, with `upsert`, inserted when none matches), as `Collection.replaceOne`. */
  | { collection: string; kind: 'replaceOne'; filter: Filter; replacement: Document; upsert?: boolean }

export type AtomicWriteResult = InsertOneResult | UpdateResult | DeleteResult

export interface Store {
  readonly kind: 'embedded' | 'mongodb'
  collection<T extends object = Document>(name: string): Collection<T>
  /**
   * Applies the writes in order, each seeing the ones before it, and all of them or none: the
   * first failure (a duplicate key, a `mustMatch` write that matched nothing, a journal or server
   * error) leaves every collection as it was. Resolves to each write's result once all are durable.
   * On a standalone MongoDB server (no transactions) the writes are applied in order without that
   * guarantee: see MongoStore.applyAtomically.
   */
  applyAtomically(writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]>
  readonly files: FileStore
  /** Lists the names of collections that hold documents. */
  listCollections(): Promise<string[]>
  /** Flushes and releases everything (the data-dir lock included). */
  close(): Promise<void>
  /**
   * The embedded store only: told of every journal commit (its duration in seconds and how many
   * writes it grouped), for the engine's metrics.
   */
  observeJournal?(listener: (seconds: number, writes: number) => void): void
  /**
   * The embedded store only, which sees every write of its data dir (it is the one process that
   * opens it): a token of the version of the document that memory holds, the same value (`===`) for
   * as long as nobody writes the document, undefined when memory does not hold it. A caller that
   * read the document when it had this token knows, without reading it again, that it is unchanged.
   * Opaque: it is only compared. Stores written by other processes too have no such method.
   */
  versionToken?(collection: string, id: string): unknown
  /**
   * The embedded store only: the document memory holds under this `_id` itself, not a copy (a read
   * by `_id` without one, for a caller that only reads what it gets). Memory never changes a document
   * it holds (a write swaps in a new one), so it stays as it was read; the caller must not change it
   * either. Undefined when memory does not hold it (there is none, or it is in the cold tier): read it
   * with `findOne` then.
   */
  heldDocument?(collection: string, id: string): Readonly<Document> | undefined
}

/** The error both stores raise on a unique index violation (same shape as the driver's MongoServerError). */
export class DuplicateKeyError extends Error {
  readonly code = 11000
  readonly keyValue: Record<string, unknown>
  constructor(collection: string, indexName: string, keyValue: Record<string, unknown>) {
    super(`E11000 duplicate key error collection: ${collection} index: ${indexName} dup key: ${JSON.stringify(keyValue)}`)
    this.name = 'MongoServerError'
    this.keyValue = keyValue
  }
}

/** Raised when a call would examine more documents than its `maxExamined` (ScanOptions). */
export class ScanBudgetExceededError extends Error {
  constructor(readonly maxExamined: number) {
    super(`the query would examine more than ${maxExamined} documents`)
    this.name = 'ScanBudgetExceededError'
  }
}

/** By name, so the error is recognized after crossing a thread (the remote store rebuilds a plain Error). */
export function isScanBudgetExceededError(err: unknown): boolean {
  return err instanceof Error && err.name === 'ScanBudgetExceededError'
}

/** Raised by `applyAtomically` when a `mustMatch` write matched nothing; nothing of the batch was applied. */
export class UnmatchedWriteError extends Error {
  /** The position of the write in the batch. */
  readonly writeIndex: number
  constructor(collection: string, writeIndex: number) {
    super(`Write ${writeIndex} of an atomic batch matched no document in ${collection}; nothing was applied`)
    this.name = 'UnmatchedWriteError'
    this.writeIndex = writeIndex
  }
}

/** By name, so the error is recognized after crossing a thread (the remote store rebuilds a plain Error). */
export function isUnmatchedWriteError(err: unknown): boolean {
  return err instanceof Error && err.name === 'UnmatchedWriteError'
}

export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000
}
