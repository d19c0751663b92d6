/**
 * A collection of the embedded store with the MongoDB driver's method semantics. Every method does
 * its reading and writing synchronously, with no `await` in between, so each one is atomic against
 * every other call in the process (a findOneAndUpdate is a claim, an updateOne on `{_id, version}` a
 * compare-and-set). Callers only ever get copies; the stored documents are never handed out.
 */
import type {
  AtomicWrite,
  AtomicWriteResult,
  Collection,
  Cursor,
  DeleteResult,
  Document,
  Filter,
  FindOneAndUpdateOptions,
  FindOneOptions,
  FindOptions,
  IndexOptions,
  ScanOptions,
  InsertManyResult,
  InsertOneResult,
  SortSpec,
  UpdateFilter,
  UpdateOptions,
  UpdateResult,
} from '../port.js'
import { ScanBudgetExceededError } from '../port.js'
import { newObjectIdHex } from '../object-id.js'
import { type Change, type DocumentTable, idKeyOf } from './document-table.js'
import { pathsRead } from './covered.js'
import { cloneDocument, encodeDocument, encodeForStorage, storedAlike } from './document-codec.js'
import { ErrorCodes, StoreArgumentError, StoreServerError } from './errors.js'
import { aggregate, compileQuery, handOut, select, updatedCopy } from './mingo.js'
import { indexSpecFrom } from './secondary-index.js'
import { upsertSeed } from './upsert-seed.js'

/** What a collection needs from the store it belongs to. */
export interface CollectionHost {
  assertOpen(): void
  /** Copies of another collection's documents, for `$lookup` and friends. */
  documentsOf(collectionName: string): Document[]
}

/** The answer of a staged write, by its kind. */
export type StagedResult<W extends AtomicWrite> = W['kind'] extends 'insertOne'
  ? InsertOneResult
  : W['kind'] extends 'deleteMany'
    ? DeleteResult
    : UpdateResult

const NOT_UPSERTED = { upsertedCount: 0, upsertedId: null } as const

function cursorOf<T>(run: () => T[]): Cursor<T> {
  // Evaluated at toArray() time, like the driver's cursors.
  return { toArray: async () => run() }
}

/**
 * The candidates, failing once more than `maxExamined` of them are asked for: the filter is tested
 * on this thread, so a call that would hold it for a whole collection stops at its budget.
 */
function examined(candidates: Iterable<Document>, maxExamined: number | undefined): Iterable<Document> {
  return maxExamined === undefined ? candidates : withinBudget(candidates, maxExamined)
}

function* withinBudget(candidates: Iterable<Document>, maxExamined: number): Iterable<Document> {
  let count = 0
  for (const doc of candidates) {
    if (++count > maxExamined) throw new ScanBudgetExceededError(maxExamined)
    yield doc
  }
}

function assertOperators(update: UpdateFilter): void {
  const keys = Object.keys(update)
  if (keys.length === 0 || !keys.every((key) => key.startsWith('$'))) {
    throw new StoreArgumentError('Update document requires atomic operators')
  }
}

function withId(doc: Document, id: unknown): Document {
  return { _id: id, ...doc }
}

export class EmbeddedCollection implements Collection<Document> {
  private readonly table: DocumentTable
  private readonly host: CollectionHost

  constructor(table: DocumentTable, host: CollectionHost) {
    this.table = table
    this.host = host
  }

  get collectionName(): string {
    return this.table.name
  }

  async insertOne(doc: Document): Promise<InsertOneResult> {
    this.host.assertOpen()
    return this.committed(this.stage({ collection: this.collectionName, kind: 'insertOne', doc }))
  }

  /** All documents or none (the driver's ordered insertMany keeps the ones before a failure). */
  async insertMany(docs: Document[]): Promise<InsertManyResult> {
    this.host.assertOpen()
    if (docs.length === 0) throw new StoreArgumentError('Invalid BulkOperation, Batch cannot be empty')
    await this.table.commit(docs.map((doc) => this.insertion(doc))).durable
    return { acknowledged: true, insertedCount: docs.length }
  }

  async findOne(filter: Filter, options: FindOneOptions = {}): Promise<Document | null> {
    this.host.assertOpen()
    const found = this.first(filter, options.sort)
    if (!found) return null
    return handOut(options.projection)(found)
  }

  find(filter: Filter, { maxExamined, ...options }: FindOptions = {}): Cursor<Document> {
    return cursorOf(() => {
      this.host.assertOpen()
      const query = compileQuery(filter)
      const { sort, skip = 0, limit = 0 } = options
      const top = sort && Object.keys(sort).length > 0 && limit > 0
      const paths = pathsRead(filter, sort, options.projection)
      const candidates = top
        ? this.table.topCandidates(filter, sort, skip + limit, (doc) => query.test(doc), paths)
        : this.table.candidates(filter, paths)
      return select(examined(candidates, maxExamined), query, options).map(handOut(options.projection))
    })
  }

  async updateOne(filter: Filter, update: UpdateFilter, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.host.assertOpen()
    return this.committed(
      this.stage({ collection: this.collectionName, kind: 'updateOne', filter, update, upsert: options.upsert === true }),
    )
  }

  /** All matched documents change together or (e.g. on a duplicate key) none does. */
  async updateMany(filter: Filter, update: UpdateFilter, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.host.assertOpen()
    return this.committed(
      this.stage({ collection: this.collectionName, kind: 'updateMany', filter, update, upsert: options.upsert === true }),
    )
  }

  async replaceOne(filter: Filter, replacement: Document, options: UpdateOptions = {}): Promise<UpdateResult> {
    this.host.assertOpen()
    return this.committed(this.replacement(filter, replacement, options.upsert === true))
  }

  async findOneAndUpdate(filter: Filter, update: UpdateFilter, options: FindOneAndUpdateOptions = {}): Promise<Document | null> {
    this.host.assertOpen()
    assertOperators(update)
    const returnAfter = options.returnDocument === 'after'
    let result: Document | undefined
    let durable: Promise<void> | undefined
    const found = this.first(filter, options.sort)
    if (found) {
      const after = this.updated(found, update, filter)
      const written = after ? this.table.commit([{ id: idKeyOf(found), before: found, after }]) : undefined
      durable = written?.durable
      result = returnAfter ? (written?.stored[0] ?? found) : found
    } else if (options.upsert) {
      const doc = this.upserted(filter, update)
      const written = this.table.commit([{ id: idKeyOf(doc), after: doc }])
      durable = written.durable
      result = returnAfter ? written.stored[0] : undefined
    }
    // Copied now, before another call can change the document, and answered once it is durable.
    const answer = result ? handOut(options.projection)(result) : null
    await durable
    return answer
  }

  async deleteOne(filter: Filter): Promise<DeleteResult> {
    this.host.assertOpen()
    const found = this.first(filter)
    if (found) await this.table.commit([{ id: idKeyOf(found), before: found }]).durable
    return { acknowledged: true, deletedCount: found ? 1 : 0 }
  }

  async deleteMany(filter: Filter): Promise<DeleteResult> {
    this.host.assertOpen()
    return this.committed(this.stage({ collection: this.collectionName, kind: 'deleteMany', filter }))
  }

  async countDocuments(filter: Filter = {}, options: ScanOptions = {}): Promise<number> {
    this.host.assertOpen()
    if (Object.keys(filter).length === 0) return this.table.size()
    return this.all(filter, options.maxExamined).length
  }

  aggregate<R extends Document = Document>(pipeline: Document[]): Cursor<R> {
    return cursorOf(() => {
      this.host.assertOpen()
      // A leading $match is answered with the query planner, so only the matches are copied.
      const [first, ...rest] = pipeline
      const leadingMatch =
        first && Object.keys(first).length === 1 && typeof first.$match === 'object' && first.$match !== null
          ? (first.$match as Filter)
          : undefined
      const input = (leadingMatch ? this.all(leadingMatch) : [...this.table.allDocuments()]).map((doc) => cloneDocument(doc))
      const stages = leadingMatch ? rest : pipeline
      return (stages.length > 0 ? aggregate(input, stages, (name) => this.host.documentsOf(name)) : input) as R[]
    })
  }

  async createIndex(keys: Record<string, 1 | -1>, options: IndexOptions = {}): Promise<string> {
    this.host.assertOpen()
    return this.table.ensureIndex(indexSpecFrom(keys, options))
  }

  async dropIndex(name: string): Promise<boolean> {
    this.host.assertOpen()
    return this.table.dropIndex(name)
  }

  /** Gives the caller's document an `_id` when it has none, as the driver does. */
  private insertion(doc: Document): Change {
    if (doc._id === undefined) doc._id = newObjectIdHex()
    if (Array.isArray(doc._id)) throw new StoreServerError(ErrorCodes.BadValue, "can't use an array for _id")
    // Stored with `_id` first, where MongoDB puts it.
    return { id: idKeyOf(doc), after: withId(doc, doc._id), afterIsCallers: true }
  }

  private first(filter: Filter, sort?: SortSpec): Document | undefined {
    const query = compileQuery(filter)
    if (sort && Object.keys(sort).length > 0) {
      return select(
        this.table.topCandidates(filter, sort, 1, (doc) => query.test(doc)),
        query,
        { sort, limit: 1 },
      )[0]
    }
    for (const doc of this.table.candidates(filter)) if (query.test(doc)) return doc
    return undefined
  }

  private all(filter: Filter, maxExamined?: number): Document[] {
    const query = compileQuery(filter)
    const found: Document[] = []
    for (const doc of examined(this.table.candidates(filter), maxExamined)) if (query.test(doc)) found.push(doc)
    return found
  }

  /** The updated copy of `before`, or undefined when the update changes nothing. */
  private updated(before: Document, update: UpdateFilter, filter: Filter): Document | undefined {
    const { $setOnInsert: _onInsertOnly, ...operators } = update
    const { after, changed } = updatedCopy(before, operators, filter)
    if (changed.length === 0) return undefined
    this.assertSameId(before, after)
    return after
  }

  /** The document an upsert inserts: the filter's equality fields, the update, then `$setOnInsert`. */
  private upserted(filter: Filter, update: UpdateFilter): Document {
    const { $setOnInsert: onInsert, ...operators } = update
    let doc = updatedCopy(upsertSeed(filter), operators, undefined).after
    if (onInsert) doc = updatedCopy(doc, { $set: onInsert }, undefined).after
    return doc._id === undefined ? withId(doc, newObjectIdHex()) : doc
  }

  /** The change a whole-document replacement makes: none when the stored document already reads the same. */
  private replacement(filter: Filter, replacement: Document, upsert: boolean): { changes: Change[]; result: UpdateResult } {
    if (Object.keys(replacement).some((key) => key.startsWith('$'))) {
      throw new StoreArgumentError('Replacement document must not contain atomic operators')
    }
    const found = this.first(filter)
    if (found) {
      const after = withId({ ...replacement }, found._id)
      this.assertSameId(found, after)
      // The replacement's encoding is also what the commit stores: encode it once.
      const encoded = encodeForStorage(after)
      // The stored document holds only what JSON keeps: so does an exact replacement, and then
      // comparing the two says what comparing their encodings would.
      const modified = encoded.exact ? !storedAlike(after, found) : encoded.text !== encodeDocument(found)
      const changes = modified ? [{ id: idKeyOf(found), before: found, after, afterIsCallers: true, encoded }] : []
      return { changes, result: { acknowledged: true, matchedCount: 1, modifiedCount: changes.length, ...NOT_UPSERTED } }
    }
    if (!upsert) return { changes: [], result: { acknowledged: true, matchedCount: 0, modifiedCount: 0, ...NOT_UPSERTED } }
    // A replacement upsert takes only `_id` from the filter, not its other equality fields.
    const doc = withId({ ...replacement }, replacement._id ?? upsertSeed(filter)._id ?? newObjectIdHex())
    return {
      changes: [{ id: idKeyOf(doc), after: doc, afterIsCallers: true }],
      result: { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id },
    }
  }

  /**
   * What a write would change, computed from the documents as they are now, and the answer it
   * gives: nothing is changed yet (`insertOne` gives the caller's document its `_id`, as the driver
   * does). The collection's own methods commit it at once; the store's atomic batch applies several.
   */
  stage<W extends AtomicWrite>(write: W): { changes: Change[]; result: StagedResult<W> } {
    return this.staged(write) as { changes: Change[]; result: StagedResult<W> }
  }

  private staged(write: AtomicWrite): { changes: Change[]; result: AtomicWriteResult } {
    switch (write.kind) {
      case 'insertOne':
        return { changes: [this.insertion(write.doc)], result: { acknowledged: true, insertedId: write.doc._id } }
      case 'replaceOne':
        return this.replacement(write.filter, write.replacement, write.upsert === true)
      case 'deleteMany': {
        const found = this.all(write.filter)
        return {
          changes: found.map((before) => ({ id: idKeyOf(before), before })),
          result: { acknowledged: true, deletedCount: found.length },
        }
      }
      case 'updateOne':
      case 'updateMany': {
        assertOperators(write.update)
        const found =
          write.kind === 'updateMany'
            ? this.all(write.filter)
            : [this.first(write.filter)].filter((doc): doc is Document => doc !== undefined)
        if (found.length === 0) {
          if (!write.upsert) return { changes: [], result: { acknowledged: true, matchedCount: 0, modifiedCount: 0, ...NOT_UPSERTED } }
          const doc = this.upserted(write.filter, write.update)
          return {
            changes: [{ id: idKeyOf(doc), after: doc }],
            result: { acknowledged: true, matchedCount: 0, modifiedCount: 0, upsertedCount: 1, upsertedId: doc._id },
          }
        }
        const changes: Change[] = []
        for (const before of found) {
          const after = this.updated(before, write.update, write.filter)
          if (after) changes.push({ id: idKeyOf(before), before, after })
        }
        return { changes, result: { acknowledged: true, matchedCount: found.length, modifiedCount: changes.length, ...NOT_UPSERTED } }
      }
    }
  }

  private async committed<R>({ changes, result }: { changes: Change[]; result: R }): Promise<R> {
    if (changes.length > 0) await this.table.commit(changes).durable
    return result
  }

  private assertSameId(before: Document, after: Document): void {
    if (idKeyOf(after) !== idKeyOf(before)) {
      throw new StoreServerError(ErrorCodes.ImmutableField, `Performing an update on the path '_id' would modify the immutable field '_id'`)
    }
  }
}
