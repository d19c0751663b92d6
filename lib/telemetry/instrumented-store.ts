/**
 * A Store that measures every call (`workflow_store_operation_duration_seconds`) and, with tracing,
 * makes a span of each, child of the request's span. The store itself is untouched: repositories get
 * this wrapper through `fastify.store`, and with neither metrics nor tracing they get the store as is.
 */
import type { Span } from '@opentelemetry/api'
import type {
  AtomicWrite,
  AtomicWriteResult,
  Collection,
  Cursor,
  DeleteResult,
  Document,
  FileStore,
  Filter,
  FindOneAndUpdateOptions,
  FindOneOptions,
  FindOptions,
  IndexOptions,
  InsertManyResult,
  InsertOneResult,
  Store,
  UpdateFilter,
  UpdateOptions,
  UpdateResult,
} from '../../store/port.js'
import { recordFailure, type Tracing } from './tracing.js'

export interface StoreOperationRecorder {
  storeOperation(collection: string, operation: string, seconds: number): void
}

export interface StoreInstruments {
  metrics?: StoreOperationRecorder | null | undefined
  tracing?: Tracing | null | undefined
}

/** The label of a call that spans collections (an atomic batch). */
export const ATOMIC_BATCH = 'atomic'
/** The label of file bytes calls (GridFS or DATA_DIR/files). */
export const FILES = 'files'

class Probe {
  constructor(private readonly instruments: StoreInstruments) {}

  async measure<T>(collection: string, operation: string, call: () => Promise<T>): Promise<T> {
    const startedAt = performance.now()
    const span: Span | undefined = this.instruments.tracing?.startStoreSpan(collection, operation)
    try {
      return await call()
    } catch (error) {
      if (span) recordFailure(span, error)
      throw error
    } finally {
      span?.end()
      this.instruments.metrics?.storeOperation(collection, operation, (performance.now() - startedAt) / 1000)
    }
  }
}

class MeasuredCursor<T> implements Cursor<T> {
  constructor(
    private readonly cursor: Cursor<T>,
    private readonly probe: Probe,
    private readonly collection: string,
    private readonly operation: string,
  ) {}

  toArray(): Promise<T[]> {
    return this.probe.measure(this.collection, this.operation, () => this.cursor.toArray())
  }
}

class MeasuredCollection<T extends object> implements Collection<T> {
  readonly collectionName: string

  constructor(
    private readonly inner: Collection<T>,
    private readonly probe: Probe,
  ) {
    this.collectionName = inner.collectionName
  }

  private measure<R>(operation: string, call: () => Promise<R>): Promise<R> {
    return this.probe.measure(this.collectionName, operation, call)
  }

  insertOne(doc: T): Promise<InsertOneResult> {
    return this.measure('insertOne', () => this.inner.insertOne(doc))
  }
  insertMany(docs: T[]): Promise<InsertManyResult> {
    return this.measure('insertMany', () => this.inner.insertMany(docs))
  }
  findOne(filter: Filter, options?: FindOneOptions): Promise<T | null> {
    return this.measure('findOne', () => this.inner.findOne(filter, options))
  }
  find(filter: Filter, options?: FindOptions): Cursor<T> {
    return new MeasuredCursor(this.inner.find(filter, options), this.probe, this.collectionName, 'find')
  }
  updateOne(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult> {
    return this.measure('updateOne', () => this.inner.updateOne(filter, update, options))
  }
  updateMany(filter: Filter, update: UpdateFilter, options?: UpdateOptions): Promise<UpdateResult> {
    return this.measure('updateMany', () => this.inner.updateMany(filter, update, options))
  }
  replaceOne(filter: Filter, replacement: T, options?: UpdateOptions): Promise<UpdateResult> {
    return this.measure('replaceOne', () => this.inner.replaceOne(filter, replacement, options))
  }
  findOneAndUpdate(filter: Filter, update: UpdateFilter, options?: FindOneAndUpdateOptions): Promise<T | null> {
    return this.measure('findOneAndUpdate', () => this.inner.findOneAndUpdate(filter, update, options))
  }
  deleteOne(filter: Filter): Promise<DeleteResult> {
    return this.measure('deleteOne', () => this.inner.deleteOne(filter))
  }
  deleteMany(filter: Filter): Promise<DeleteResult> {
    return this.measure('deleteMany', () => this.inner.deleteMany(filter))
  }
  countDocuments(filter?: Filter): Promise<number> {
    return this.measure('countDocuments', () => this.inner.countDocuments(filter))
  }
  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R> {
    return new MeasuredCursor(this.inner.aggregate<R>(pipeline), this.probe, this.collectionName, 'aggregate')
  }
  createIndex(keys: Record<string, 1 | -1>, options?: IndexOptions): Promise<string> {
    return this.measure('createIndex', () => this.inner.createIndex(keys, options))
  }
}

class MeasuredFileStore implements FileStore {
  constructor(
    private readonly inner: FileStore,
    private readonly probe: Probe,
  ) {}

  put(...args: Parameters<FileStore['put']>): ReturnType<FileStore['put']> {
    return this.probe.measure(FILES, 'put', () => this.inner.put(...args))
  }
  get(storageHandle: string): ReturnType<FileStore['get']> {
    return this.probe.measure(FILES, 'get', () => this.inner.get(storageHandle))
  }
  delete(storageHandle: string): Promise<boolean> {
    return this.probe.measure(FILES, 'delete', () => this.inner.delete(storageHandle))
  }
}

class MeasuredStore implements Store {
  readonly kind: Store['kind']
  readonly files: FileStore
  private readonly probe: Probe
  private readonly collections = new Map<string, Collection<object>>()

  constructor(
    private readonly inner: Store,
    instruments: StoreInstruments,
  ) {
    this.kind = inner.kind
    this.probe = new Probe(instruments)
    this.files = new MeasuredFileStore(inner.files, this.probe)
  }

  collection<T extends object = Document>(name: string): Collection<T> {
    let collection = this.collections.get(name)
    if (!collection) {
      collection = new MeasuredCollection(this.inner.collection<object>(name), this.probe)
      this.collections.set(name, collection)
    }
    return collection as Collection<T>
  }

  applyAtomically(writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]> {
    return this.probe.measure(ATOMIC_BATCH, 'applyAtomically', () => this.inner.applyAtomically(writes))
  }

  listCollections(): Promise<string[]> {
    return this.inner.listCollections()
  }

  close(): Promise<void> {
    return this.inner.close()
  }
}

/** The store as repositories should see it: measured and traced as configured, or the store itself. */
export function instrumentStore(store: Store, instruments: StoreInstruments): Store {
  if (!instruments.metrics && !instruments.tracing) return store
  return new MeasuredStore(store, instruments)
}
