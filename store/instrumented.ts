/**
 * A Store that measures every call (`workflow_store_operation_duration_seconds`) and, with tracing,
 * makes a span of each, child of the request's span. The store itself is untouched: repositories get
 * this wrapper through `fastify.store`, and with neither metrics nor tracing they get the store as is.
 */
import type { Span } from '@opentelemetry/api'
import { forwardingCollection, invoke } from './forwarding-collection.js'
import type { AtomicWrite, AtomicWriteResult, Collection, Document, FileStore, Store } from './port.js'
import { recordFailure, type Tracing } from '../lib/telemetry/tracing.js'

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

/** The collection with every call measured; a cursor is measured when it is read. */
function measuredCollection(inner: Collection<object>, probe: Probe): Collection<object> {
  const name = inner.collectionName
  return forwardingCollection(name, {
    call: (method, args) => probe.measure(name, method, () => invoke(inner, method, args)),
    cursor: (method, args) => {
      const cursor = invoke(inner, method, args)
      return { toArray: () => probe.measure(name, method, () => cursor.toArray()) }
    },
  })
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
  readonly versionToken?: Store['versionToken']
  readonly heldDocument?: Store['heldDocument']
  private readonly probe: Probe
  private readonly collections = new Map<string, Collection<object>>()

  constructor(
    private readonly inner: Store,
    instruments: StoreInstruments,
  ) {
    this.kind = inner.kind
    if (inner.versionToken) this.versionToken = inner.versionToken.bind(inner)
    // Memory's own object, handed over without a read of the store: nothing to measure.
    if (inner.heldDocument) this.heldDocument = inner.heldDocument.bind(inner)
    this.probe = new Probe(instruments)
    this.files = new MeasuredFileStore(inner.files, this.probe)
  }

  collection<T extends object = Document>(name: string): Collection<T> {
    let collection = this.collections.get(name)
    if (!collection) {
      collection = measuredCollection(this.inner.collection<object>(name), this.probe)
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
