/**
 * The store's side of a remote store: runs every call that arrives on the port on the real store
 * (on the thread that owns it) and answers with the result or the error.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { type CollectionOperations, invoke, isCursorMethod } from '../forwarding-collection.js'
import type { Document, Store } from '../port.js'
import { receiveStream, sendStream } from './port-stream.js'
import {
  type CollectionCall,
  type FoundFileReply,
  type InsertManyReply,
  type StoreCall,
  type StoreReply,
  type StoreRequest,
  serializeError,
} from './protocol.js'

/** Runs the call on the store; a cursor is read whole, an insertMany also answers the ids the store gave. */
async function runCollectionCall(store: Store, call: CollectionCall): Promise<unknown> {
  const collection = store.collection<Document>(call.collection)
  if (call.method === 'insertMany') {
    // The client built `method` and `args` together from CollectionOperations, so they match.
    const [docs] = call.args as CollectionOperations['insertMany']
    const result = await collection.insertMany(docs)
    return { result, ids: docs.map((doc) => doc._id) } satisfies InsertManyReply
  }
  return isCursorMethod(call.method) ? invoke(collection, call.method, call.args).toArray() : invoke(collection, call.method, call.args)
}

interface Answer {
  value: unknown
  bytes?: MessagePort
}

async function run(store: Store, call: StoreCall): Promise<Answer> {
  switch (call.target) {
    case 'collection':
      return { value: await runCollectionCall(store, call) }
    case 'store':
      return { value: call.method === 'listCollections' ? await store.listCollections() : await store.applyAtomically(call.writes) }
    case 'files':
      switch (call.method) {
        case 'put':
          return { value: await store.files.put(receiveStream(call.bytes), call.meta) }
        case 'delete':
          return { value: await store.files.delete(call.storageHandle) }
        case 'get': {
          const file = await store.files.get(call.storageHandle)
          if (!file) return { value: null }
          const channel = new MessageChannel()
          sendStream(file.stream, channel.port1)
          const found: FoundFileReply = { size: file.size, fileName: file.fileName, contentType: file.contentType }
          return { value: found, bytes: channel.port2 }
        }
      }
  }
}

export interface StoreHost {
  /** Waits for the calls under way, then stops answering; the store itself stays open (its owner closes it). */
  close(): Promise<void>
}

/** Serves `store` to the client at the other end of `port`. */
export function serveStore(store: Store, port: MessagePort): StoreHost {
  const inFlight = new Set<Promise<void>>()
  const answer = async (request: StoreRequest): Promise<void> => {
    let reply: StoreReply
    let transfer: MessagePort[] = []
    try {
      const { value, bytes } = await run(store, request)
      reply = bytes ? { id: request.id, ok: true, value, bytes } : { id: request.id, ok: true, value }
      if (bytes) transfer = [bytes]
      port.postMessage(reply, transfer)
    } catch (error) {
      // A failed call, or a result that cannot be cloned (DataCloneError): either way the caller gets it.
      port.postMessage({ id: request.id, ok: false, error: serializeError(error) } satisfies StoreReply)
    }
  }
  port.on('message', (request: StoreRequest) => {
    const answered = answer(request)
    inFlight.add(answered)
    void answered.finally(() => inFlight.delete(answered))
  })
  return {
    async close() {
      await Promise.all(inFlight)
      port.close()
    },
  }
}
