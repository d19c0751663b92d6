/**
 * One collection's state: its documents by `_id` key, its secondary indexes, and the single path by
 * which any of them changes (`commit`), which is all-or-nothing across memory and SQLite: memory
 * changes at once, and is changed back if the journal cannot make the change durable.
 */
import { DuplicateKeyError, type Document, type Filter } from '../port.js'
import { cloneDocument, decodeDocument, encodeDocument, encodeForStorage } from './document-codec.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import { keyOf, valuesAtPath } from './index-keys.js'
import type { JournalOp } from './journal.js'
import type { JournalWriter } from './journal-writer.js'
import { candidates } from './query-plan.js'
import { type IndexEntry, type IndexSpec, sameDefinition, sameKeys, SecondaryIndex } from './secondary-index.js'

/** A document's state before and after a write: no `before` is an insert, no `after` a delete. */
export interface Change {
  id: string
  before?: Document
  after?: Document
  /** `after` (or objects inside it) belongs to the caller, so the table must store a copy. */
  afterIsCallers?: boolean
  /** `encodeForStorage(after)`, when the caller has it already. */
  encoded?: { text: string; exact: boolean }
}

export class DocumentTable {
  readonly name: string
  /** Stored documents by `keyOf(_id)`. Never mutated in place: a write swaps in a new object. */
  readonly docs = new Map<string, Document>()
  private readonly indexByName = new Map<string, SecondaryIndex>()
  private readonly journal: JournalWriter

  constructor(name: string, journal: JournalWriter) {
    this.name = name
    this.journal = journal
  }

  /** Reload from SQLite: trusted data, no checks. */
  restoreDocument(id: string, doc: Document): void {
    this.docs.set(id, doc)
  }

  restoreIndex(spec: IndexSpec): void {
    const index = new SecondaryIndex(this.name, spec)
    for (const [id, doc] of this.docs) index.insert(id, index.entryOf(doc))
    this.indexByName.set(spec.name, index)
  }

  candidates(filter: Filter): Iterable<Document> {
    return candidates(filter, { docs: this.docs, indexes: this.indexByName.values() })
  }

  /**
   * Applies the changes to the indexes and memory, or (on a duplicate key or a value that cannot be
   * saved) to none of them, and hands them to the journal. `stored` is the stored form of each
   * `after` (exactly what a reload from SQLite gives), in order; undefined for deletes. `durable`
   * resolves once SQLite has them; when it cannot, the changes are undone and it rejects.
   */
  commit(changes: Change[]): { stored: Array<Document | undefined>; durable: Promise<void> } {
    const { stored, ops, revert } = this.apply(changes)
    return { stored, durable: this.journal.append(ops, revert) }
  }

  /**
   * `commit` without the journal: applies the changes to the indexes and memory (or throws, having
   * changed nothing) and returns the journal ops that make them durable and the function that undoes
   * them. The caller hands the ops to the journal, together with other tables' (an atomic batch).
   */
  apply(changes: Change[]): { stored: Array<Document | undefined>; ops: JournalOp[]; revert: () => void } {
    const ops: JournalOp[] = []
    const stored: Array<Document | undefined> = []
    for (const change of changes) {
      if (!change.after) {
        ops.push({ collection: this.name, id: change.id, text: null })
        stored.push(undefined)
        continue
      }
      const { text, exact } = change.encoded ?? encodeForStorage(change.after)
      ops.push({ collection: this.name, id: change.id, text })
      // An exact encoding means plain JSON values and Dates only, which structuredClone copies faithfully.
      stored.push(!exact ? decodeDocument(text) : change.afterIsCallers ? cloneDocument(change.after) : change.after)
    }

    const inserted = new Set<string>()
    changes.forEach((change, i) => {
      if (change.before) return
      if (this.docs.has(change.id) || inserted.has(change.id)) {
        throw new DuplicateKeyError(this.name, '_id_', { _id: stored[i]?._id })
      }
      inserted.add(change.id)
    })

    // Every old entry leaves before any new one is checked, so a batch may swap unique values.
    const moves: Array<{ index: SecondaryIndex; id: string; old: IndexEntry; next: IndexEntry; doc: Document | undefined }> = []
    changes.forEach((change, i) => {
      const after = stored[i]
      for (const index of this.indexByName.values()) {
        const old = change.before ? index.entryOf(change.before) : null
        const next = after ? index.entryOf(after) : null
        if (!SecondaryIndex.sameEntry(old, next)) moves.push({ index, id: change.id, old, next, doc: after })
      }
    })
    const undo: Array<() => void> = []
    try {
      for (const { index, id, old } of moves) {
        index.delete(id, old)
        undo.push(() => index.insert(id, old))
      }
      for (const { index, id, next, doc } of moves) {
        if (next === null || !doc) continue
        index.assertUnique(id, next, doc)
        index.insert(id, next)
        undo.push(() => index.delete(id, next))
      }
    } catch (err) {
      for (const step of undo.reverse()) step()
      throw err
    }

    changes.forEach((change, i) => {
      const after = stored[i]
      if (after) this.docs.set(change.id, after)
      else this.docs.delete(change.id)
    })
    const revert = (): void => {
      for (let i = changes.length - 1; i >= 0; i--) {
        const { id, before } = changes[i] as Change
        if (before) this.docs.set(id, before)
        else this.docs.delete(id)
      }
      for (const step of undo.reverse()) step()
    }
    return { stored, ops, revert }
  }

  /** Creates the index unless an identical one exists; resolves to its name once it is durable. */
  async ensureIndex(spec: IndexSpec): Promise<string> {
    if (Object.keys(spec.keys).length === 1 && spec.keys._id === 1 && !spec.unique) return '_id_'
    const sameName = this.indexByName.get(spec.name)
    if (sameName) {
      if (sameDefinition(sameName.spec, spec)) return spec.name
      throw sameKeys(sameName.spec, spec)
        ? new StoreServerError(ErrorCodes.IndexOptionsConflict, `An index named ${spec.name} already exists with different options`)
        : new StoreServerError(ErrorCodes.IndexKeySpecsConflict, `An index named ${spec.name} already exists with different keys`)
    }
    for (const index of this.indexByName.values()) {
      if (sameDefinition(index.spec, spec)) {
        throw new StoreServerError(ErrorCodes.IndexOptionsConflict, `Index already exists with a different name: ${index.spec.name}`)
      }
    }
    const index = new SecondaryIndex(this.name, spec)
    for (const [id, doc] of this.docs) {
      const entry = index.entryOf(doc)
      index.assertUnique(id, entry, doc)
      index.insert(id, entry)
    }
    this.indexByName.set(spec.name, index)
    const op: JournalOp = { collection: this.name, indexName: spec.name, indexSpec: encodeDocument({ ...spec }) }
    await this.journal.append([op], () => this.indexByName.delete(spec.name))
    return spec.name
  }

  /** Drops the index of that name; resolves false when there is none, once the drop is durable. */
  async dropIndex(name: string): Promise<boolean> {
    const index = this.indexByName.get(name)
    if (!index) return false
    this.indexByName.delete(name)
    const op: JournalOp = { collection: this.name, indexName: name, indexSpec: null }
    await this.journal.append([op], () => this.indexByName.set(name, index))
    return true
  }

  /**
   * Deletes the documents whose TTL index date is more than expireAfterSeconds before `now`; returns
   * how many, and when their removal is durable.
   */
  expire(now: Date): { removed: number; durable: Promise<void> } {
    const expired = new Map<string, Change>()
    for (const index of this.indexByName.values()) {
      const ttl = index.spec.expireAfterSeconds
      if (ttl === undefined) continue
      const cutoff = now.getTime() - ttl * 1000
      for (const [id, doc] of this.docs) {
        if (expired.has(id) || !index.covers(doc)) continue
        // Like MongoDB: a document expires by the earliest date in the field; non-dates never expire.
        const dates = valuesAtPath(doc, index.firstField)
          .flat()
          .filter((v): v is Date => v instanceof Date)
        if (dates.length > 0 && Math.min(...dates.map((d) => d.getTime())) <= cutoff) expired.set(id, { id, before: doc })
      }
    }
    if (expired.size === 0) return { removed: 0, durable: Promise.resolve() }
    return { removed: expired.size, durable: this.commit([...expired.values()]).durable }
  }
}

export function idKeyOf(doc: Document): string {
  return keyOf(doc._id)
}
