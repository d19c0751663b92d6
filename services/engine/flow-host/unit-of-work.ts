/**
 * The data writes of one request, held back until the request commits. Flow functions' `data`
 * inserts, updates and deletes are recorded here, in order, as store writes (AtomicWrite); the
 * instance commit applies them in the same atomic batch as its compare-and-set (instances/service.ts),
 * and a request that fails, or loses the compare-and-set, simply never applies them.
 *
 * Reads inside the run go through the overlay: committed documents, with the ones this request
 * wrote (or deleted) in their place, so a `find` sees the run's own earlier writes. The overlay
 * evaluates filters and `$set` with the embedded store's MongoDB semantics (mingo).
 *
 * A write is replayed at commit as the operation it was (an `updateMany` on its filter, not the
 * documents it matched during the run), so a concurrent request's committed change to other
 * fields is never overwritten with the copy this run read.
 */
import type { UniqueKey } from '../models/repository.js'
import { compileQuery, updatedCopy } from '../../../store/embedded/mingo.js'
import { upsertSeed } from '../../../store/embedded/upsert-seed.js'
import { newObjectIdHex } from '../../../store/object-id.js'
import {
  type AtomicWrite,
  type Document,
  DuplicateKeyError,
  type Filter,
  isDuplicateKeyError,
  type ScanOptions,
  type Store,
} from '../../../store/port.js'
import type { Savepoints } from '../../../runtime/types.js'
import { deepCopy } from '../../../lib/deep-copy.js'

/** A document as this request left it: its new content, or null when the request deleted it. */
type Shadow = Document | null

interface ShadowUndo {
  collection: string
  key: string
  /** The entry before the write; undefined when there was none. */
  previous: { id: unknown; doc: Shadow } | undefined
}

function valueAt(doc: Document, path: string): unknown {
  let value: unknown = doc
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

function idKey(id: unknown): string {
  return typeof id === 'string' ? `s:${id}` : `j:${JSON.stringify(id)}`
}

export class UnitOfWork implements Savepoints {
  private readonly pending: AtomicWrite[] = []
  /** By physical collection, then by `_id` key: the `_id` value and what this request made of it. */
  private readonly shadows = new Map<string, Map<string, { id: unknown; doc: Shadow }>>()
  private readonly undo: ShadowUndo[] = []
  /** Savepoints: how many writes and overlay changes there were when each was taken. */
  private readonly marks: Array<{ writes: number; undos: number }> = []

  constructor(private readonly store: Store) {}

  /** The writes to apply at commit, in the order the run made them. */
  writes(): readonly AtomicWrite[] {
    return this.pending
  }

  /**
   * The collection whose unique index refused these writes when the store applied them, or
   * undefined when `error` is not that: a key the run checked and did not see, because another
   * request stored it in between (both stores name the collection in a duplicate key's message).
   */
  refusedBy(error: unknown): string | undefined {
    if (!isDuplicateKeyError(error) || !(error instanceof Error)) return undefined
    return this.pending.find((write) => error.message.includes(`${write.collection} index: `))?.collection
  }

  mark(): number {
    this.marks.push({ writes: this.pending.length, undos: this.undo.length })
    return this.marks.length - 1
  }

  /** Forgets every write made since `mark` (a function step that failed with `onError: "fail"`). */
  discardSince(mark: number): void {
    const taken = this.marks[mark]
    if (!taken) throw new Error(`Unknown savepoint ${mark}`)
    const { writes, undos } = taken
    this.pending.length = Math.min(this.pending.length, writes)
    while (this.undo.length > undos) {
      const { collection, key, previous } = this.undo.pop() as ShadowUndo
      const shadows = this.shadows.get(collection)
      if (!shadows) continue
      if (previous) shadows.set(key, previous)
      else shadows.delete(key)
    }
  }

  /**
   * Applies the writes (atomically) for a request that has no instance to commit them with
   * (standalone execute). A request with an instance hands `writes()` to its commit instead.
   */
  async applyAlone(): Promise<void> {
    if (this.pending.length > 0) await this.store.applyAtomically(this.pending)
  }

  /**
   * `unique`: the collection's unique indexes (their fields), checked here against what the run
   * sees, so a duplicate fails the run as it did when writes went straight to the store; the store
   * checks them again at commit, against writes that were committed meanwhile.
   */
  async insert(collection: string, doc: Document, unique: readonly UniqueKey[]): Promise<unknown> {
    // The id is chosen now, so the run knows it and the commit inserts exactly that document.
    const id = doc._id === undefined ? newObjectIdHex() : doc._id
    const stored = { _id: id, ...doc }
    // A freshly generated id collides with nothing; one the function chose may.
    if (doc._id !== undefined && (await this.visible(collection, { _id: id }, 1)).length > 0)
      throw new DuplicateKeyError(collection, '_id_', { _id: id })
    await this.assertUnique(collection, [stored], unique)
    this.shadow(collection, id, stored)
    this.pending.push({ collection, kind: 'insertOne', doc: deepCopy(stored) })
    return id
  }

  async update(
    collection: string,
    filter: Filter,
    set: Document,
    upsert: boolean,
    unique: readonly UniqueKey[],
    scan: ScanOptions = {},
  ): Promise<{ matchedCount: number; modifiedCount: number; upsertedId: unknown }> {
    const matched = await this.visible(collection, filter, undefined, scan)
    const update: Document = { $set: set }
    const written: Document[] = []
    let upsertedId: unknown = null
    for (const before of matched) {
      const { after, changed } = updatedCopy(before, update, filter)
      if (changed.length > 0) written.push(after)
    }
    if (matched.length === 0 && upsert) {
      const seeded = updatedCopy(upsertSeed(filter), update, undefined).after
      upsertedId = seeded._id ?? newObjectIdHex()
      written.push({ _id: upsertedId, ...seeded })
      // The commit's upsert inserts the id the run was told, not one of its own.
      if (seeded._id === undefined) update.$setOnInsert = { _id: upsertedId }
    }
    await this.assertUnique(collection, written, unique)
    for (const doc of written) this.shadow(collection, doc._id, doc)
    const modifiedCount = upsertedId === null ? written.length : 0
    this.pending.push({ collection, kind: 'updateMany', filter: deepCopy(filter), update: deepCopy(update), upsert })
    return { matchedCount: matched.length, modifiedCount, upsertedId }
  }

  async delete(collection: string, filter: Filter, scan: ScanOptions = {}): Promise<number> {
    const matched = await this.visible(collection, filter, undefined, scan)
    for (const doc of matched) this.shadow(collection, doc._id, null)
    this.pending.push({ collection, kind: 'deleteMany', filter: deepCopy(filter) })
    return matched.length
  }

  /** `scan` bounds the documents the store examines for it (its filter comes from a tenant's function). */
  find(collection: string, filter: Filter, limit: number, scan: ScanOptions = {}): Promise<Document[]> {
    return this.visible(collection, filter, limit, scan)
  }

  /** The documents matching `filter` as this request sees them: committed ones, overlaid with its own writes. */
  private async visible(collection: string, filter: Filter, limit?: number, scan: ScanOptions = {}): Promise<Document[]> {
    const shadows = this.shadows.get(collection)
    const options = limit === undefined ? { ...scan } : { ...scan, limit }
    if (!shadows || shadows.size === 0) return this.store.collection(collection).find(filter, options).toArray()
    const ownIds = [...shadows.values()].map((entry) => entry.id)
    const committed = await this.store
      .collection(collection)
      .find({ $and: [filter, { _id: { $nin: ownIds } }] }, options)
      .toArray()
    const query = compileQuery(filter)
    const own = [...shadows.values()].flatMap(({ doc }) => (doc && query.test(doc) ? [deepCopy(doc)] : []))
    const all = [...committed, ...own]
    return limit === undefined ? all : all.slice(0, limit)
  }

  /**
   * Throws the store's duplicate-key error when a written document collides with another one the run sees (or with another written one).
   */
  private async assertUnique(collection: string, written: readonly Document[], unique: readonly UniqueKey[]): Promise<void> {
    if (written.length === 0) return
    const writtenIds = new Set(written.map((doc) => idKey(doc._id)))
    for (const fields of unique) {
      const seen = new Set<string>()
      for (const doc of written) {
        // As in MongoDB, a missing field is indexed as null.
        const keyValue = Object.fromEntries(fields.map((field) => [field, valueAt(doc, field) ?? null]))
        const key = JSON.stringify(keyValue)
        // Documents being written are checked against each other here, not against their old selves.
        const collides =
          seen.has(key) ||
          (await this.visible(collection, keyValue, writtenIds.size + 1)).some((other) => !writtenIds.has(idKey(other._id)))
        if (collides) throw new DuplicateKeyError(collection, fields.map((field) => `${field}_1`).join('_'), keyValue)
        seen.add(key)
      }
    }
  }

  private shadow(collection: string, id: unknown, doc: Shadow): void {
    let shadows = this.shadows.get(collection)
    if (!shadows) {
      shadows = new Map()
      this.shadows.set(collection, shadows)
    }
    const key = idKey(id)
    this.undo.push({ collection, key, previous: shadows.get(key) })
    shadows.set(key, { id, doc })
  }
}
