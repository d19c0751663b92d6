/**
 * A Collection whose every method hands its name and arguments to one function: what a wrapper of a
 * collection is made of (the remote client sends the call over a port, the instrumented store measures
 * it). The method tables are typed as records over the port's methods, so a method added to
 * Collection is forwarded by every wrapper or the build fails.
 */
import type { Collection, Cursor } from './port.js'

/** Every method of the port's Collection. */
export type CollectionMethod = {
  [M in keyof Collection]: Collection[M] extends (...args: never[]) => unknown ? M : never
}[keyof Collection]

/** Each method's arguments, as the port declares them. */
export type CollectionOperations = { [M in CollectionMethod]: Parameters<Collection[M]> }

/** The methods that answer a cursor (`find`, `aggregate`); every other one answers a promise. */
export type CursorMethod = { [M in CollectionMethod]: ReturnType<Collection[M]> extends Cursor<unknown> ? M : never }[CollectionMethod]
export type PromiseMethod = Exclude<CollectionMethod, CursorMethod>

const CURSOR_METHODS: Record<CursorMethod, true> = { find: true, aggregate: true }
const PROMISE_METHODS: Record<PromiseMethod, true> = {
  insertOne: true,
  insertMany: true,
  findOne: true,
  updateOne: true,
  updateMany: true,
  replaceOne: true,
  findOneAndUpdate: true,
  deleteOne: true,
  deleteMany: true,
  countDocuments: true,
  createIndex: true,
  dropIndex: true,
}

/** Does `method` answer a cursor? */
export function isCursorMethod(method: CollectionMethod): method is CursorMethod {
  return Object.hasOwn(CURSOR_METHODS, method)
}

export interface Forwarding {
  call(method: PromiseMethod, args: unknown[]): Promise<unknown>
  cursor(method: CursorMethod, args: unknown[]): Cursor<unknown>
}

export function forwardingCollection<T extends object>(collectionName: string, forwarding: Forwarding): Collection<T> {
  const collection: Record<string, unknown> = { collectionName }
  for (const method of Object.keys(PROMISE_METHODS) as PromiseMethod[]) {
    collection[method] = (...args: unknown[]) => forwarding.call(method, args)
  }
  for (const method of Object.keys(CURSOR_METHODS) as CursorMethod[]) {
    collection[method] = (...args: unknown[]) => forwarding.cursor(method, args)
  }
  // Both tables cover every method of the port (they are records over its method names), and each
  // method passes on the arguments its caller gave the port, so this object is a Collection<T>.
  return collection as unknown as Collection<T>
}

/** Calls `method` of `collection` with arguments a forwarding collection received for it. */
export function invoke(collection: Collection<object>, method: PromiseMethod, args: unknown[]): Promise<unknown>
export function invoke(collection: Collection<object>, method: CursorMethod, args: unknown[]): Cursor<unknown>
export function invoke(collection: Collection<object>, method: CollectionMethod, args: unknown[]): Promise<unknown> | Cursor<unknown> {
  const target = collection[method] as (...args: unknown[]) => Promise<unknown> | Cursor<unknown>
  return target.apply(collection, args)
}
