/**
 * A port collection over a driver collection: every call goes straight to the driver with the same
 * arguments. The one addition: an upsert that does not say its `_id` gets a generated 24-hex string
 * id (as inserts do through the client's pkFactory) instead of the server's ObjectId, so ids have
 * the same type in both stores.
 */
import type { ClientSession, Collection as DriverCollection, Db, Filter as DriverFilter, UpdateFilter as DriverUpdateFilter } from 'mongodb'
import { newObjectIdHex } from '../object-id.js'
import {
  type AtomicWrite,
  type AtomicWriteResult,
  type Collection,
  type Cursor,
  type DeleteResult,
  type Document,
  type Filter,
  type FindOneAndUpdateOptions,
  type FindOneOptions,
  type FindOptions,
  type IndexOptions,
  type InsertManyResult,
  type InsertOneResult,
  type UpdateFilter,
  type UpdateOptions,
  type UpdateResult,
  UnmatchedWriteError,
} from '../port.js'

/** Does the filter give the upserted document its `_id` (an equality on `_id`, also inside `$and`)? */
function filterFixesId(filter: Filter): boolean {
  const condition = filter._id
  if (condition !== undefined) {
    const isOperators = typeof condition === 'object' && condition !== null && Object.keys(condition).some((key) => key.startsWith('$'))
    if (!isOperators || '$eq' in (condition as object)) return true
  }
  return Array.isArray(filter.$and) && filter.$and.some((clause) => filterFixesId(clause as Filter))
}

function updateSetsId(update: UpdateFilter): boolean {
  return ['$set', '$setOnInsert'].some((op) => {
    const fields = update[op]
    return typeof fields === 'object' && fields !== null && '_id' in fields
  })
}

function withUpsertId(filter: Filter, update: UpdateFilter, upsert: boolean | undefined): UpdateFilter {
  if (!upsert || filterFixesId(filter) || updateSetsId(update)) return update
  const onInsert = (update.$setOnInsert ?? {}) as Document
  return { ...update, $setOnInsert: { ...onInsert, _id: newObjectIdHex() } }
}

/** The server-side time limit of an operation that takes a filter, unless the store is given another. */
export const DEFAULT_MAX_TIME_MS = 10_000

export class MongoCollection implements Collection<Document> {
  private readonly inner: DriverCollection<Document>
  /** `maxTimeMS` of every operation that takes a filter: no filter (a `$regex` above all) holds the server longer. */
  private readonly limit: { maxTimeMS: number }

  constructor(inner: DriverCollection<Document>, maxTimeMs = DEFAULT_MAX_TIME_MS) {
    this.inner = inner
    this.limit = { maxTimeMS: maxTimeMs }
  }

  get collectionName(): string {
    return this.inner.collectionName
  }

  insertOne(doc: Document): Promise<InsertOneResult> {
    return this.inner.insertOne(doc)
  }

  insertMany(docs: Document[]): Promise<InsertManyResult> {
    return this.inner.insertMany(docs)
  }

  findOne(filter: Filter, options?: FindOneOptions): Promise<Document | null> {
    return this.inner.findOne(filter as DriverFilter<Document>, { ...options, ...this.limit })
  }

  find(filter: Filter, { maxExamined: _inTheServer, ...options }: FindOptions = {}): Cursor<Document> {
    // The server evaluates the filter, bounded by maxTimeMS: the scan budget of the embedded store has no part here.
    return this.inner.find(filter as DriverFilter<Document>, { ...options, ...this.limit })
  }

  updateOne(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult> {
    return this.inner.updateOne(
      filter as DriverFilter<Document>,
      withUpsertId(filter, update, options?.upsert) as DriverUpdateFilter<Document>,
      { ...options, ...this.limit },
    )
  }

  updateMany(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult> {
    return this.inner.updateMany(
      filter as DriverFilter<Document>,
      withUpsertId(filter, update, options?.upsert) as DriverUpdateFilter<Document>,
      { ...options, ...this.limit },
    )
  }

  replaceOne(filter: Filter, replacement: Document, options?: UpdateOptions): Promise<UpdateResult> {
    return this.inner.replaceOne(filter as DriverFilter<Document>, replacement, { ...options, ...this.limit })
  }

  findOneAndUpdate(filter: Filter, update: UpdateFilter, options: FindOneAndUpdateOptions = {}): Promise<Document | null> {
    return this.inner.findOneAndUpdate(
      filter as DriverFilter<Document>,
      withUpsertId(filter, update, options.upsert) as DriverUpdateFilter<Document>,
      { ...options, ...this.limit, includeResultMetadata: false },
    )
  }

  deleteOne(filter: Filter): Promise<DeleteResult> {
    return this.inner.deleteOne(filter as DriverFilter<Document>, this.limit)
  }

  deleteMany(filter: Filter): Promise<DeleteResult> {
    return this.inner.deleteMany(filter as DriverFilter<Document>, this.limit)
  }

  countDocuments(filter: Filter = {}): Promise<number> {
    return this.inner.countDocuments(filter as DriverFilter<Document>, this.limit)
  }

  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R> {
    return this.inner.aggregate<R>(pipeline, this.limit)
  }

  createIndex(keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<string> {
    return this.inner.createIndex(keys, options)
  }

  async dropIndex(name: string): Promise<boolean> {
    try {
      await this.inner.dropIndex(name)
      return true
    } catch (error) {
      // IndexNotFound (27) and NamespaceNotFound (26): nothing of that name to drop.
      const code = (error as { code?: unknown }).code
      if (code === 27 || code === 26) return false
      throw error
    }
  }
}

/**
 * One write of an atomic batch on the driver, inside `session`'s transaction when there is one.
 * A `mustMatch` write that matched nothing throws UnmatchedWriteError (which aborts the transaction).
 */
export async function applyWrite(
  db: Db,
  write: AtomicWrite,
  index: number,
  session: ClientSession | undefined,
): Promise<AtomicWriteResult> {
  const inner = db.collection<Document>(write.collection)
  switch (write.kind) {
    case 'insertOne':
      return inner.insertOne(write.doc, { session })
    case 'deleteMany':
      return inner.deleteMany(write.filter as DriverFilter<Document>, { session })
    case 'replaceOne':
      return inner.replaceOne(write.filter as DriverFilter<Document>, write.replacement, { upsert: write.upsert === true, session })
    case 'updateOne':
    case 'updateMany': {
      const update = withUpsertId(write.filter, write.update, write.upsert) as DriverUpdateFilter<Document>
      const options = { upsert: write.upsert === true, session }
      const result =
        write.kind === 'updateOne'
          ? await inner.updateOne(write.filter as DriverFilter<Document>, update, options)
          : await inner.updateMany(write.filter as DriverFilter<Document>, update, options)
      if (write.mustMatch && result.matchedCount === 0) throw new UnmatchedWriteError(write.collection, index)
      return result
    }
  }
}
