/**
 * One collection's state: its hot documents by `_id` key, its secondary indexes (the unique ones
 * kept up to date by every write, the others brought up to date when a read plans on them,
 * deferred-upkeep.ts), its cold documents (in SQLite only, cold-tier.ts), and the single path by
 * which any of them changes (`commit`), which is all-or-nothing across memory and SQLite: memory
 * changes at once, and is changed back if the journal cannot make the change durable.
 *
 * The cold side is read through memory: a document in memory is the current one even when SQLite
 * also has it cold (a write not yet durable, or one about to leave memory), and an id deleted in
 * memory hides SQLite's copy until the delete is durable. A written document the rule calls cold
 * stays in memory until its write is durable and then leaves, so a read right after an
 * acknowledged write always finds it, in one place or the other.
 */
import { DuplicateKeyError, type Document, type Filter, type SortSpec } from '../port.js'
import type { StoreLogger } from '../logger.js'
import type { ColdFile, HotRowVerdict, KeyRange } from './cold-file.js'
import { type ColdRule, indexesColdDocuments, isCold, matchesOnlyHot } from './cold-tier.js'
import { ColdEntryBatch, gatherUniqueColdEntries, saveColdEntries } from './cold-index-build.js'
import { type Cover, coveredDocument, coverOf } from './covered.js'
import { DeferredUpkeep, MAX_AWAITING_UPKEEP } from './deferred-upkeep.js'
import { cloneDocument, decodeDocument, encodeDocument, encodeForStorage } from './document-codec.js'
import { ErrorCodes, StoreServerError } from './errors.js'
import { isScalar, keyOf, valuesAtPath } from './index-keys.js'
import type { ColdArray, ColdKey, JournalOp } from './journal.js'
import type { JournalWriter } from './journal-writer.js'
import { AFTER_PREFIX, fieldAt, ORDERED_KINDS, orderedKey } from './ordered-keys.js'
import { candidates, type ColdPlan, coldPlan, pinnedByUnique } from './query-plan.js'
import { type IndexEntry, type IndexSpec, sameDefinition, sameKeys, SecondaryIndex } from './secondary-index.js'

/** A cold index entry as a range read gives it: with its document's JSON, or without (a covered read). */
interface ColdEntryRow {
  id: string
  key: string
  doc?: string
}

/** The SQLite side of a table: the file, and the collection's cold rule (none: nothing new goes cold). */
export interface ColdSide {
  file: ColdFile
  rule: ColdRule | undefined
  /** Told when an index is built over the cold documents (at a first start after an upgrade, a long read). */
  logger?: StoreLogger | undefined
}

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
  /**
   * Hot documents (and cold ones whose write is not durable yet) by `keyOf(_id)`. Never mutated in
   * place: a write swaps in a new object.
   */
  readonly docs = new Map<string, Document>()
  private readonly indexByName = new Map<string, SecondaryIndex>()
  private readonly journal: JournalWriter
  /** Set when SQLite may hold cold documents of this collection: the collection has a rule, or had one. */
  private readonly cold: ColdSide | undefined
  /** Ids deleted in memory whose delete is not durable yet (how many such deletes): SQLite's cold copy is hidden. */
  private readonly deleting = new Map<string, number>()
  /** Indexes whose cold entries are still being saved (cold-index-build.ts): cold reads do not plan on them. */
  private readonly building = new Set<SecondaryIndex>()
  /** `<indexName>\0<field position>` of the index fields that hold an array in some cold document. */
  private readonly coldArrays = new Set<string>()
  /**
   * The index entries computed for documents that went into memory by a write, kept while the
   * document is: its next write needs them as the old entries (documents are never changed in place).
   */
  private readonly entriesKept = new WeakMap<Document, Map<SecondaryIndex, IndexEntry>>()
  /** The collection's writers promise every insert a new `_id` (cold-tier.ts): inserts are not looked up among the cold rows. */
  private readonly freshIds: boolean
  /** What the non-unique indexes are behind on: they catch up when a read plans on them (deferred-upkeep.ts). */
  private readonly upkeep = new DeferredUpkeep()

  constructor(name: string, journal: JournalWriter, cold?: ColdSide) {
    this.name = name
    this.journal = journal
    this.cold = cold
    const rule = cold?.rule
    this.freshIds = rule !== undefined && 'freshIds' in rule && rule.freshIds === true
    // Every other collection's inserts are looked up among the cold rows, through the filter of cold ids.
    if (cold && !this.freshIds) cold.file.trackIds(name)
  }

  /** Reload from SQLite at open: trusted data, no checks. Indexes are restored first. */
  restoreRow(id: string, text: string): HotRowVerdict {
    const doc = decodeDocument(text)
    if (this.cold?.rule && isCold(this.cold.rule, doc)) return { keep: false, ...this.coldEntriesOf(doc) }
    this.docs.set(id, doc)
    for (const index of this.indexByName.values()) index.insert(id, index.entryOf(doc))
    return { keep: true }
  }

  restoreIndex(spec: IndexSpec): void {
    this.indexByName.set(spec.name, new SecondaryIndex(this.name, spec))
    if (spec.unique && this.cold) this.cold.file.trackKeys(this.name, spec.name)
  }

  restoreColdArray(indexName: string, field: number): void {
    this.coldArrays.add(coldArrayKey(indexName, field))
  }

  /** The documents a filter may match; `paths`, the fields the read needs (covered.ts), may let cold ones come from index entries alone. */
  candidates(filter: Filter, paths?: ReadonlySet<string>): Iterable<Document> {
    const { hot, plan } = this.plans(filter)
    return plan ? this.withCold(hot, plan, paths) : hot
  }

  /** The hot candidates, and how to find the cold ones (none when only hot documents can match). */
  private plans(filter: Filter): { hot: Iterable<Document>; plan?: ColdPlan } {
    const hot = candidates(filter, { docs: this.docs, indexes: this.upToDateIndexesFor(filter) })
    if (!this.cold || (this.cold.rule && matchesOnlyHot(this.cold.rule, filter))) return { hot }
    const plan = coldPlan(
      filter,
      this.indexByName.values(),
      (index, field) => this.holdsColdArray(index, field),
      // An index whose cold entries are still being saved, or that holds none, cannot find cold documents.
      (index) => this.indexesColdDocuments(index) && !this.building.has(index),
    )
    return { hot, plan }
  }

  /**
   * `candidates`, for a read that keeps only the first `count` matches in `sort` order: when the
   * sort's first field is the field right after the pinned prefix of the index the cold plan reads,
   * the cold entries are read in that order, and each kind of value (ordered-keys.ts ORDERED_KINDS)
   * under each pinned prefix stops once `count` matches are found and the field's value changes, so a
   * page of the newest records (or of the oldest ended instances) reads a page, not the history.
   * The caller sorts the hot and cold candidates together.
   */
  topCandidates(
    filter: Filter,
    sort: SortSpec,
    count: number,
    matches: (doc: Document) => boolean,
    paths?: ReadonlySet<string>,
  ): Iterable<Document> {
    const { hot, plan } = this.plans(filter)
    if (!plan) return hot
    const [first] = Object.entries(sort)
    if (!first || !('index' in plan) || !plan.bounds) return this.withCold(hot, plan, paths)
    const { index, bounds } = plan
    const [field, direction] = first
    if (index.fields[bounds.fields] !== field || this.holdsColdArray(index, bounds.fields)) return this.withCold(hot, plan, paths)
    // Per pinned prefix: a range on the sorted field stays within one kind of value; without one,
    // each kind is read apart.
    const { range } = bounds
    const kinds = bounds.prefixes.flatMap((prefix) =>
      range
        ? [{ from: prefix + range.from, to: prefix + range.to, ordered: true, fieldStart: prefix.length }]
        : ORDERED_KINDS.map((kind) => ({
            from: prefix + kind.from,
            to: prefix + kind.to,
            ordered: kind.ordered,
            fieldStart: prefix.length,
          })),
    )
    return this.withTop(hot, index, kinds, direction === -1, count, matches, paths && this.coverOf(index, paths))
  }

  private *withTop(
    hot: Iterable<Document>,
    index: SecondaryIndex,
    kinds: ReadonlyArray<KeyRange & { ordered: boolean; fieldStart: number }>,
    descending: boolean,
    count: number,
    matches: (doc: Document) => boolean,
    cover: Cover | undefined,
  ): Generator<Document> {
    yield* hot
    const seen = new Set<string>()
    for (const kind of kinds) {
      let found = 0
      let lastValue: string | undefined
      for (const row of this.coldEntries(index, kind, cover, descending)) {
        const value = fieldAt(row.key, kind.fieldStart)
        // Enough of this kind, and every tie of the last one read: the rest of it sorts after them.
        if (kind.ordered && found >= count && value !== lastValue) break
        if (seen.has(row.id) || this.shadowed(row.id)) continue
        seen.add(row.id)
        const doc = this.coldDocument(row, cover)
        if (!doc || !matches(doc)) continue
        found++
        lastValue = value
        yield doc
      }
    }
  }

  /** Every document, hot and cold. */
  allDocuments(): Iterable<Document> {
    return this.cold ? this.withCold(this.docs.values(), { scan: true }) : this.docs.values()
  }

  /** How many documents there are, hot and cold. */
  size(): number {
    if (!this.cold) return this.docs.size
    const { file } = this.cold
    // Cold rows of ids that memory holds (or is deleting) are counted once, in memory, or not at all.
    let shadowed = 0
    for (const id of this.docs.keys()) if (file.get(this.name, id) !== undefined) shadowed++
    for (const id of this.deleting.keys()) if (!this.docs.has(id) && file.get(this.name, id) !== undefined) shadowed++
    return this.docs.size + file.countCold(this.name) - shadowed
  }

  hasDocuments(): boolean {
    if (this.docs.size > 0) return true
    if (!this.cold || !this.cold.file.hasCold(this.name)) return false
    // Counted only while deletes are in flight, which may be removing the last cold ones.
    return this.deleting.size === 0 || this.size() > 0
  }

  /** Is SQLite's cold copy of this id out of date (memory has the document, or is deleting it)? */
  private shadowed(id: string): boolean {
    return this.docs.has(id) || (this.deleting.size > 0 && this.deleting.has(id))
  }

  private *withCold(hot: Iterable<Document>, plan: ColdPlan, paths?: ReadonlySet<string>): Generator<Document> {
    yield* hot
    yield* this.coldDocuments(plan, paths)
  }

  /** Does the index field hold an array in some cold document? */
  private holdsColdArray(index: SecondaryIndex, field: number): boolean {
    return this.coldArrays.has(coldArrayKey(index.spec.name, field))
  }

  /** The cover the index gives a read of `paths` (covered.ts), unless a field of it holds an array in a cold document. */
  private coverOf(index: SecondaryIndex, paths: ReadonlySet<string>): Cover | undefined {
    return coverOf(index.fields, paths, (field) => this.holdsColdArray(index, field))
  }

  /** The cold entries of the index in the range: with their documents, or (covered) without. */
  private coldEntries(index: SecondaryIndex, range: KeyRange, cover: Cover | undefined, descending = false): Iterable<ColdEntryRow> {
    const { file } = this.cold as ColdSide
    return cover
      ? file.coveredRange(this.name, index.spec.name, range, descending)
      : file.range(this.name, index.spec.name, range, descending)
  }

  /** A cold entry's document: parsed from its row, or the fields the cover needs, or (an entry that does not tell them) read after all. */
  private coldDocument(row: ColdEntryRow, cover: Cover | undefined): Document | undefined {
    if (row.doc !== undefined) return decodeDocument(row.doc)
    const covered = cover && coveredDocument(cover, row.key, row.id)
    if (covered) return covered
    const text = (this.cold as ColdSide).file.get(this.name, row.id)
    return text === undefined ? undefined : decodeDocument(text)
  }

  /** The cold documents the plan reaches, each once, skipping those memory holds. */
  private *coldDocuments(plan: ColdPlan, paths?: ReadonlySet<string>): Generator<Document> {
    const { file } = this.cold as ColdSide
    if ('ids' in plan) {
      for (const id of plan.ids) {
        if (this.shadowed(id)) continue
        const text = file.get(this.name, id)
        if (text !== undefined) yield decodeDocument(text)
      }
      return
    }
    if ('scan' in plan) {
      for (const row of file.scan(this.name)) if (!this.shadowed(row.id)) yield decodeDocument(row.doc)
      return
    }
    const cover = paths && this.coverOf(plan.index, paths)
    // A document has one entry in an index none of whose fields holds an array: one range meets it once.
    const singleEntries = plan.index.fields.every((_, field) => !this.holdsColdArray(plan.index, field))
    const once = plan.ranges.length === 1 && singleEntries
    const seen = new Set<string>()
    // Each range is then one whole key of the unique index, which its filter of cold keys may rule out.
    const wholeUniqueKeys =
      singleEntries && plan.index.spec.unique && plan.bounds?.fields === plan.index.fields.length && !plan.bounds.range
    for (const range of plan.ranges) {
      // The range starts at the key; SQLite is asked only when a cold entry may have it.
      if (wholeUniqueKeys && !file.mayHoldKey(this.name, plan.index.spec.name, range.from)) continue
      for (const row of this.coldEntries(plan.index, range, cover)) {
        if (this.shadowed(row.id)) continue
        if (!once) {
          if (seen.has(row.id)) continue
          seen.add(row.id)
        }
        const doc = this.coldDocument(row, cover)
        if (doc) yield doc
      }
    }
  }

  /**
   * The indexes a read may plan on, each up to date with every write. A read of one `_id` finds its
   * document without an index; one that `_id` or a whole unique index pins (kept up to date by every
   * write) plans on the unique ones alone, so that the others need not catch up for it: a job's removal
   * by its schedule key (services/engine/jobs/escalations/jobs.ts) then leaves the job's insert and
   * delete to cancel out in the deferred indexes. Any other read brings those up to date first.
   */
  private upToDateIndexesFor(filter: Filter): Iterable<SecondaryIndex> {
    if (isScalar(filter._id) || this.upkeep.size === 0) return this.indexByName.values()
    const unique = [...this.indexByName.values()].filter((index) => index.spec.unique)
    if (pinnedByUnique(filter, unique)) return unique
    this.catchUp()
    return this.indexByName.values()
  }

  /** Brings the non-unique indexes up to date with every write since the last read that planned on them (or with the `count` oldest). */
  private catchUp(count?: number): void {
    if (this.upkeep.size === 0) return
    const deferred = [...this.indexByName.values()].filter((index) => !index.spec.unique)
    this.upkeep.catchUp(deferred, this.docs, (index, doc) => this.keptEntry(index, doc), count)
  }

  /**
   * The entries of a document going cold, computed once for all who need them, in each index SQLite
   * holds cold entries of: its cold keys, and memory's unique indexes (every unique index is one,
   * cold-tier.ts `indexesColdDocuments`), checked by the write. A hot-only index needs none: its
   * entry is only ever removed from memory at the eviction, which computes it then if that index
   * holds it (`evict`).
   */
  private entriesOf(doc: Document): Map<SecondaryIndex, IndexEntry> {
    const entries = new Map<SecondaryIndex, IndexEntry>()
    for (const index of this.indexByName.values()) if (this.indexesColdDocuments(index)) entries.set(index, index.entryOf(doc))
    return entries
  }

  /** The document's entry in the index, computed once while the document is kept in memory. */
  private keptEntry(index: SecondaryIndex, doc: Document): IndexEntry {
    let entries = this.entriesKept.get(doc)
    if (!entries) {
      entries = new Map()
      this.entriesKept.set(doc, entries)
    }
    let entry = entries.get(index)
    if (entry === undefined) {
      entry = index.entryOf(doc)
      entries.set(index, entry)
    }
    return entry
  }

  /** The index entries a cold document is found by (`entries`, as entriesOf gives them), and the index fields where it holds an array. */
  private coldEntriesOf(doc: Document, entries = this.entriesOf(doc)): { keys: ColdKey[]; arrays: ColdArray[] } {
    const keys: ColdKey[] = []
    const arrays: ColdArray[] = []
    for (const [index, entry] of entries) {
      if (entry === null) continue
      for (const key of entry.ordered) keys.push([index.spec.name, key])
      entry.arrays.forEach((array, field) => {
        if (array) arrays.push([index.spec.name, field])
      })
    }
    for (const [indexName, field] of arrays) this.coldArrays.add(coldArrayKey(indexName, field))
    return { keys, arrays }
  }

  /**
   * Throws DuplicateKeyError when a cold document other than `id` (and other than those the write
   * changes, whose new entries memory checks) holds one of the entry's keys in the unique index.
   */
  private assertUniqueAmongCold(index: SecondaryIndex, id: string, entry: IndexEntry, doc: Document, changing: ReadonlySet<string>): void {
    if (!this.cold || !index.spec.unique || entry === null) return
    for (const key of entry.ordered) {
      const holder = this.cold.file
        .holdersOf(this.name, index.spec.name, key)
        .find((other) => other !== id && !changing.has(other) && !this.shadowed(other))
      if (holder !== undefined) index.duplicateKey(doc)
    }
  }

  /**
   * Whether SQLite may hold cold index entries for the document a change replaces (the journal then
   * removes them): it was read from the cold tier, or memory still holds it on its way there. An
   * insert has none: an id a cold document holds is refused (or promised fresh, `freshIds`).
   */
  private mayHoldColdKeys(change: Change, beforeInMemory: boolean): boolean {
    if (!this.cold || !change.before) return false
    const rule = this.cold.rule
    return !beforeInMemory || (rule !== undefined && isCold(rule, change.before))
  }

  /** The ids among these that a cold document holds (SQLite's copy not shadowed by memory): one read for all. */
  private takenByCold(ids: string[]): Set<string> {
    if (this.freshIds) return new Set()
    const unshadowed = this.cold ? ids.filter((id) => !this.shadowed(id)) : []
    return unshadowed.length === 0 ? new Set() : (this.cold as ColdSide).file.coldIdsAmong(this.name, unshadowed)
  }

  /**
   * Applies the changes to the indexes and memory, or (on a duplicate key or a value that cannot be
   * saved) to none of them, and hands them to the journal. `stored` is the stored form of each
   * `after` (exactly what a reload from SQLite gives), in order; undefined for deletes. `durable`
   * resolves once SQLite has them; when it cannot, the changes are undone and it rejects.
   */
  commit(changes: Change[]): { stored: Array<Document | undefined>; durable: Promise<void> } {
    const { stored, ops, revert, settle } = this.apply(changes)
    return { stored, durable: this.journal.append(ops, revert).then(settle) }
  }

  /**
   * `commit` without the journal: applies the changes to the indexes and memory (or throws, having
   * changed nothing) and returns the journal ops that make them durable and the function that undoes
   * them. The caller hands the ops to the journal, together with other tables' (an atomic batch),
   * and calls `settle` once they are durable: then the documents the rule calls cold leave memory.
   */
  apply(changes: Change[]): { stored: Array<Document | undefined>; ops: JournalOp[]; revert: () => void; settle: () => void } {
    const ops: JournalOp[] = []
    const stored: Array<Document | undefined> = []
    const rule = this.cold?.rule
    // Whether each `before` is memory's (else it was read from the cold tier, and is in no in-memory index).
    const beforeInMemory = changes.map((change) => this.docs.has(change.id))
    // The entries of the documents going cold (undefined for the others), for the indexes of now: used again below and at eviction.
    const coldEntries: Array<Map<SecondaryIndex, IndexEntry> | undefined> = []
    // Told to the cold tier's filters once the checks below passed: told before, the documents' own ids and keys would look taken.
    const goingCold: Array<{ id: string; keys: readonly ColdKey[] }> = []
    changes.forEach((change, i) => {
      // SQLite holds cold index entries only for a document stored cold: one read from the cold tier,
      // or one on its way there; a write of any other document has none to remove.
      const drops = this.mayHoldColdKeys(change, beforeInMemory[i] as boolean) ? { dropsColdKeys: true as const } : {}
      if (!change.after) {
        ops.push({ collection: this.name, id: change.id, text: null, ...drops })
        stored.push(undefined)
        coldEntries.push(undefined)
        return
      }
      const { text, exact } = change.encoded ?? encodeForStorage(change.after)
      // An exact encoding means plain JSON values and Dates only, which structuredClone copies faithfully.
      const after = !exact ? decodeDocument(text) : change.afterIsCallers ? cloneDocument(change.after) : change.after
      stored.push(after)
      const entries = rule !== undefined && isCold(rule, after) ? this.entriesOf(after) : undefined
      coldEntries.push(entries)
      if (!entries) ops.push({ collection: this.name, id: change.id, text, ...drops })
      else {
        const { keys, arrays } = this.coldEntriesOf(after, entries)
        ops.push({ collection: this.name, id: change.id, text, cold: true, keys, arrays, ...drops })
        goingCold.push({ id: change.id, keys })
      }
    })

    const inserted = new Set<string>()
    const takenByCold = this.takenByCold(changes.filter((change) => !change.before).map((change) => change.id))
    changes.forEach((change, i) => {
      if (change.before) return
      if (this.docs.has(change.id) || inserted.has(change.id) || takenByCold.has(change.id)) {
        throw new DuplicateKeyError(this.name, '_id_', { _id: stored[i]?._id })
      }
      inserted.add(change.id)
    })

    // Every old entry leaves before any new one is checked, so a batch may swap unique values. The
    // other indexes are only told which documents changed: they catch up when they are read.
    const moves: Array<{ index: SecondaryIndex; id: string; old: IndexEntry; next: IndexEntry; doc: Document | undefined }> = []
    changes.forEach((change, i) => {
      const after = stored[i]
      this.upkeep.changed(change.id, change.before && beforeInMemory[i] ? change.before : null)
      for (const index of this.indexByName.values()) {
        if (!index.spec.unique) continue
        if (change.before && beforeInMemory[i] && after && index.sameFieldValues(change.before, after)) continue
        const old = change.before && beforeInMemory[i] ? this.keptEntry(index, change.before) : null
        const computed = coldEntries[i]
        const next = !after ? null : computed?.has(index) ? (computed.get(index) as IndexEntry) : this.keptEntry(index, after)
        if (!SecondaryIndex.sameEntry(old, next)) moves.push({ index, id: change.id, old, next, doc: after })
      }
    })
    const changing = this.cold ? new Set(changes.map((change) => change.id)) : new Set<string>()
    const undo: Array<() => void> = []
    try {
      for (const { index, id, old } of moves) {
        index.delete(id, old)
        undo.push(() => index.insert(id, old))
      }
      for (const { index, id, next, doc } of moves) {
        if (next === null || !doc) continue
        index.assertUnique(id, next, doc)
        this.assertUniqueAmongCold(index, id, next, doc, changing)
        index.insert(id, next)
        undo.push(() => index.delete(id, next))
      }
    } catch (err) {
      for (const step of undo.reverse()) step()
      throw err
    }
    for (const { id, keys } of goingCold) (this.cold as ColdSide).file.noteCold(this.name, id, keys)

    changes.forEach((change, i) => {
      const after = stored[i]
      if (after) this.docs.set(change.id, after)
      else {
        this.docs.delete(change.id)
        if (this.cold) this.deleting.set(change.id, (this.deleting.get(change.id) ?? 0) + 1)
      }
    })
    const forgetDeletes = (): void => {
      changes.forEach((change, i) => {
        if (stored[i] || !this.cold) return
        const pending = (this.deleting.get(change.id) ?? 1) - 1
        if (pending > 0) this.deleting.set(change.id, pending)
        else this.deleting.delete(change.id)
      })
    }
    const revert = (): void => {
      for (let i = changes.length - 1; i >= 0; i--) {
        const { id, before } = changes[i] as Change
        // A read may have brought the deferred indexes up to date with this write meanwhile.
        this.upkeep.changed(id, this.docs.get(id) ?? null)
        if (before && beforeInMemory[i]) this.docs.set(id, before)
        else this.docs.delete(id)
      }
      for (const step of undo.reverse()) step()
      forgetDeletes()
    }
    const settle = (): void => {
      forgetDeletes()
      changes.forEach((change, i) => {
        const after = stored[i]
        // Durable and cold: it leaves memory, unless a later write has replaced it meanwhile.
        const entries = coldEntries[i]
        if (entries && after && this.docs.get(change.id) === after) this.evict(change.id, after, entries)
      })
    }
    if (this.upkeep.size > MAX_AWAITING_UPKEEP) this.catchUp(this.upkeep.size - MAX_AWAITING_UPKEEP)
    return { stored, ops, revert, settle }
  }

  /** `entries`: the document's entries computed when it was written (an index created since has its own computed here). */
  private evict(id: string, doc: Document, entries: Map<SecondaryIndex, IndexEntry>): void {
    // The non-unique indexes may hold an earlier version's entries, or none, when they are behind on it.
    const filed = this.upkeep.leaving(id)
    for (const index of this.indexByName.values()) {
      if (filed === undefined || index.spec.unique)
        index.delete(id, entries.has(index) ? (entries.get(index) as IndexEntry) : index.entryOf(doc))
      else if (filed !== null) index.delete(id, this.keptEntry(index, filed))
    }
    this.docs.delete(id)
  }

  /** Creates the index unless an identical one exists; resolves to its name once it is durable. */
  async ensureIndex(spec: IndexSpec): Promise<string> {
    // A new index is built from the documents as they are now, beside indexes that are too.
    this.catchUp()
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
    const coldEntries = new ColdEntryBatch(this.name, spec.name)
    const indexesCold = this.indexesColdDocuments(index)
    for (const [id, doc] of this.docs) {
      const entry = index.entryOf(doc)
      index.assertUnique(id, entry, doc)
      index.insert(id, entry)
      // A document on its way to the cold tier leaves memory once its write is durable: SQLite needs its entry too.
      if (indexesCold && this.cold?.rule && isCold(this.cold.rule, doc)) coldEntries.add(id, entry)
    }
    const file = indexesCold ? this.cold?.file : undefined
    const rows = file && { pages: () => file.scanPages(this.name), shadowed: (id: string) => this.shadowed(id) }
    if (rows && spec.unique) {
      gatherUniqueColdEntries(index, rows, coldEntries)
      file.trackKeys(this.name, spec.name, coldEntries.gatheredKeys())
    }
    this.indexByName.set(spec.name, index)
    const wanted = (): boolean => this.indexByName.get(spec.name) === index
    const revert = (): void => {
      if (wanted()) this.indexByName.delete(spec.name)
    }
    if (rows && !spec.unique) {
      const started = Date.now()
      const log = { collection: this.name, index: spec.name }
      this.cold?.logger?.info(log, 'building an index over the cold documents')
      this.building.add(index)
      try {
        await saveColdEntries(index, rows, coldEntries, (op) => this.journal.append([op], revert), wanted)
      } finally {
        this.building.delete(index)
      }
      this.cold?.logger?.info({ ...log, ms: Date.now() - started }, 'index built over the cold documents')
    }
    for (const [, field] of coldEntries.arrayFields()) this.coldArrays.add(coldArrayKey(spec.name, field))
    await this.journal.append([coldEntries.drain(encodeDocument({ ...spec }))], revert)
    return spec.name
  }

  /** Whether SQLite holds this index's entries of the cold documents (cold-tier.ts `hotOnlyIndexes`). */
  private indexesColdDocuments(index: SecondaryIndex): boolean {
    return indexesColdDocuments(this.cold?.rule, index.spec)
  }

  /** Drops the index of that name; resolves false when there is none, once the drop is durable. */
  async dropIndex(name: string): Promise<boolean> {
    const index = this.indexByName.get(name)
    if (!index) return false
    this.indexByName.delete(name)
    // Untracked, every key of the index is a maybe: also right for the index a failed drop restores.
    this.cold?.file.untrackKeys(this.name, name)
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
      // An index still being built finds not every cold document yet: it expires them once it is complete.
      if (ttl === undefined || this.building.has(index)) continue
      const cutoff = now.getTime() - ttl * 1000
      for (const [id, doc] of this.expiryCandidates(index, cutoff)) {
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

  /** The hot documents, and the cold ones whose entry in the TTL index is a date up to the cutoff. */
  private *expiryCandidates(index: SecondaryIndex, cutoff: number): Generator<[string, Document]> {
    yield* this.docs
    if (!this.cold) return
    const dates = orderedKey(new Date(0)).slice(0, 1)
    const range = { from: dates, to: orderedKey(new Date(cutoff)) + AFTER_PREFIX }
    for (const doc of this.coldDocuments({ index, ranges: [range] })) yield [idKeyOf(doc), doc]
  }
}

/** The `coldArrays` member of an index field. */
function coldArrayKey(indexName: string, field: number): string {
  return `${indexName}\0${field}`
}

export function idKeyOf(doc: Document): string {
  return keyOf(doc._id)
}
