/** Test support shared by the store's tests. */
import type { Document, Store } from './port.js'

/** Every document of a collection in `_id` order: what a test compares a whole collection with. */
export function documentsById(store: Store, collection: string): Promise<Document[]> {
  return store
    .collection(collection)
    .find({}, { sort: { _id: 1 } })
    .toArray()
}
