/**
 * A Store for a thread that does not own the store: every call goes over a MessagePort to the
 * host (host.ts) on the owning thread, which runs it on the real store. Results are copies (as
 * from either store) and errors keep their name, message, `code` and other properties, so
 * repositories cannot tell it from the store it fronts.
 */
import type { Readable } from 'node:stream'
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { type CollectionMethod, type CollectionOperations, forwardingCollection } from '../forwarding-collection.js'
import type { AtomicWrite, AtomicWriteResult, Collection, Document, FileStore, InsertOneResult, Store, StoredFile } from '../port.js'
import { receiveStream, sendStream } from './port-stream.js'
import {
  deserializeError,
  type FileMeta,
  type FoundFileReply,
  type InsertManyReply,
  type StoreCall,
  type StoreReply,
  type StoreRequest,
} from './protocol.js'

interface Answer {
  value: unknown
  bytes: MessagePort | undefined
}

/** The client's end of the port: numbers each call and settles it with its reply. */
class StoreConnection {
  private nextId = 1
  private readonly pending = new Map<number, { resolve: (answer: Answer) => void; reject: (error: Error) => void }>()
  private closed = false

  constructor(private readonly port: MessagePort) {
    port.on('message', (reply: StoreReply) => {
      const call = this.pending.get(reply.id)
      if (!call) return
      this.pending.delete(reply.id)
      if (reply.ok) call.resolve({ value: reply.value, bytes: reply.bytes })
      else call.reject(deserializeError(reply.error))
    })
    port.once('close', () => this.end(new Error('The store thread closed the connection')))
  }

  call(call: StoreCall, transfer: MessagePort[] = []): Promise<Answer> {
    if (this.closed) return Promise.reject(new Error('The remote store is closed'))
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      const request: StoreRequest = { ...call, id }
      try {
        this.port.postMessage(request, transfer)
      } catch (error) {
        // Arguments that cannot be cloned (a function in a filter) fail here, as a call.
        this.pending.delete(id)
        reject(error as Error)
      }
    })
  }

  async value(call: StoreCall): Promise<unknown> {
    return (await this.call(call)).value
  }

  close(): void {
    this.end(new Error('The remote store was closed while the call was under way'))
    this.port.close()
  }

  private end(error: Error): void {
    this.closed = true
    for (const call of this.pending.values()) call.reject(error)
    this.pending.clear()
  }
}

/** A collection whose every call runs on the host; documents come back as copies. */
function remoteCollection(collectionName: string, connection: StoreConnection): Collection<object> {
  // The arguments are the ones the caller gave the port's method of that name.
  const call = (method: CollectionMethod, args: unknown[]): Promise<unknown> =>
    connection.value({ target: 'collection', collection: collectionName, method, args: args as CollectionOperations[typeof method] })
  const forwarded = forwardingCollection<object>(collectionName, {
    call,
    cursor: (method, args) => ({ toArray: () => call(method, args) as Promise<unknown[]> }),
  })
  return {
    ...forwarded,
    async insertOne(doc: Document) {
      const result = (await call('insertOne', [doc])) as InsertOneResult
      // The driver puts the generated id on the caller's document; the host only had a copy of it.
      if (doc._id === undefined) doc._id = result.insertedId
      return result
    },
    async insertMany(docs: Document[]) {
      const { result, ids } = (await call('insertMany', [docs])) as InsertManyReply
      docs.forEach((doc, index) => {
        if (doc._id === undefined) doc._id = ids[index]
      })
      return result
    },
  }
}

class RemoteFileStore implements FileStore {
  constructor(private readonly connection: StoreConnection) {}

  async put(source: Readable, meta: FileMeta): Promise<StoredFile> {
    const channel = new MessageChannel()
    sendStream(source, channel.port1)
    const { value } = await this.connection.call(
      { target: 'files', method: 'put', meta: { fileName: meta.fileName, contentType: meta.contentType }, bytes: channel.port2 },
      [channel.port2],
    )
    return value as StoredFile
  }

  async get(storageHandle: string): Promise<{ stream: Readable; size: number; fileName: string; contentType: string } | null> {
    const { value, bytes } = await this.connection.call({ target: 'files', method: 'get', storageHandle })
    if (value === null || !bytes) return null
    return { ...(value as FoundFileReply), stream: receiveStream(bytes) }
  }

  async delete(storageHandle: string): Promise<boolean> {
    return (await this.connection.value({ target: 'files', method: 'delete', storageHandle })) as boolean
  }
}

export class RemoteStore implements Store {
  readonly files: FileStore
  private readonly connection: StoreConnection
  private readonly collections = new Map<string, Collection<object>>()

  /** `kind` is the kind of the store the host runs (repositories may ask). */
  constructor(
    port: MessagePort,
    readonly kind: Store['kind'],
  ) {
    this.connection = new StoreConnection(port)
    this.files = new RemoteFileStore(this.connection)
  }

  collection<T extends object = Document>(name: string): Collection<T> {
    let collection = this.collections.get(name)
    if (!collection) {
      collection = remoteCollection(name, this.connection)
      this.collections.set(name, collection)
    }
    return collection as unknown as Collection<T>
  }

  async listCollections(): Promise<string[]> {
    return (await this.connection.value({ target: 'store', method: 'listCollections' })) as string[]
  }

  async applyAtomically(writes: readonly AtomicWrite[]): Promise<AtomicWriteResult[]> {
    const results = (await this.connection.value({ target: 'store', method: 'applyAtomically', writes })) as AtomicWriteResult[]
    // As with insertOne: the generated ids go on the caller's documents, which the host only had copies of.
    writes.forEach((write, index) => {
      if (write.kind === 'insertOne' && write.doc._id === undefined) write.doc._id = (results[index] as InsertOneResult).insertedId
    })
    return results
  }

  /** Ends the connection; the store itself belongs to the host's thread, which closes it. */
  async close(): Promise<void> {
    this.connection.close()
  }
}
