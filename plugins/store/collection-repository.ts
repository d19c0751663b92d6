/**
 * A repository over one collection that declares its indexes as data: ensureIndexes creates them
 * (before the app serves a request, see repository-plugin.ts), so each repository says only which
 * indexes it needs, not again how they are made.
 */
import type { Collection, IndexOptions } from '../../store/port.js'
import type { IndexedRepository } from './repository-plugin.js'

/** An index of the collection: its keys and how it is made (its name, uniqueness…). */
export interface IndexDeclaration extends IndexOptions {
  keys: Record<string, 1 | -1>
}

export abstract class CollectionRepository<Document extends object> implements IndexedRepository {
  protected abstract readonly indexes: readonly IndexDeclaration[]

  constructor(protected readonly collection: Collection<Document>) {}

  async ensureIndexes(): Promise<void> {
    for (const { keys, ...options } of this.indexes) await this.collection.createIndex(keys, options)
  }
}
