/**
 * What crosses the thread boundary between a remote store client and the host that runs its calls
 * on the real store. Messages are structured clones, so Dates, RegExps and nested documents arrive
 * intact; errors do not keep their own properties through a clone (MongoDB's `code`, `keyValue`),
 * so they travel as SerializedError and are rebuilt with the same observable shape.
 */
import type { MessagePort } from 'node:worker_threads'
import type { CollectionMethod, CollectionOperations } from '../forwarding-collection.js'
import type { AtomicWrite, InsertManyResult } from '../port.js'

export interface CollectionCall<M extends CollectionMethod = CollectionMethod> {
  target: 'collection'
  collection: string
  method: M
  args: CollectionOperations[M]
}

export interface FileMeta {
  fileName: string
  contentType: string
}

export type StoreCall =
  | CollectionCall
  | { target: 'store'; method: 'listCollections' }
  | { target: 'store'; method: 'applyAtomically'; writes: readonly AtomicWrite[] }
  /** `bytes` is the sending end of a port-stream (port-stream.ts) of the file's bytes. */
  | { target: 'files'; method: 'put'; meta: FileMeta; bytes: MessagePort }
  | { target: 'files'; method: 'get'; storageHandle: string }
  | { target: 'files'; method: 'delete'; storageHandle: string }

export type StoreRequest = StoreCall & { id: number }

export type StoreReply =
  /** `bytes`: the stream of a file `get` found. */
  { id: number; ok: true; value: unknown; bytes?: MessagePort } | { id: number; ok: false; error: SerializedError }

/**
 * insertMany's answer on the wire: the driver (and the embedded store) put the generated `_id`s on
 * the caller's documents, but the host only has clones of them, so the ids travel back.
 */
export interface InsertManyReply {
  result: InsertManyResult
  ids: unknown[]
}

/** A file `get` found: what the port's FileStore answers besides the stream. */
export interface FoundFileReply {
  size: number
  fileName: string
  contentType: string
}

export interface SerializedError {
  name: string
  message: string
  stack: string | undefined
  /** The error's own enumerable properties that survive a structured clone (`code`, `keyValue`, ...). */
  properties: Record<string, unknown>
}

export function serializeError(error: unknown): SerializedError {
  if (!(error instanceof Error)) return { name: 'Error', message: String(error), stack: undefined, properties: {} }
  const properties: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(error)) {
    if (key === 'name' || key === 'message' || key === 'stack') continue
    try {
      structuredClone(value)
      properties[key] = value
    } catch {
      // A property that cannot be cloned (a function, a socket) says nothing a caller checks.
    }
  }
  return { name: error.name, message: error.message, stack: error.stack, properties }
}

/** An Error with the original's name, message, stack (from the store's thread) and properties. */
export function deserializeError(serialized: SerializedError): Error {
  const error = new Error(serialized.message)
  error.name = serialized.name
  if (serialized.stack !== undefined) error.stack = serialized.stack
  return Object.assign(error, serialized.properties)
}
