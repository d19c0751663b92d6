/**
 * The in-memory filters of what the cold tier holds (cold-ids.ts): a collection's cold ids, a unique
 * index's cold keys. A filter SQLite already holds values for is filled in the background after the
 * open, a page of rows at a time with a pause as long as the page took after each, so that a store
 * with millions of cold documents serves at once instead of reading them all first, and the fill
 * takes at most about half of the thread from the requests it serves meanwhile
 * (docs/performance.md#cold-filters-filled-after-the-open).
 * Until a filter is full it answers "maybe" for everything, which sends the question to SQLite, as
 * if there were no filter: slower, never wrong.
 *
 * A value made cold while its filter fills is added to it at once (`add`), before its write reaches
 * SQLite, so a page read later need not see it: everything SQLite held when the filter was made is
 * read by the pages, everything after that is added by the writes.
 */
import { ColdIdFilter } from './cold-ids.js'

/** Rows a page reads into a filter being filled: about 2 ms of the store's thread on the slowest VM measured. */
export const FILL_PAGE_ROWS = 1024

/** Reads the values that follow `after` (all of them from the start when undefined), at most `limit`, in order. */
export type ValuePage<Cursor> = (after: Cursor | undefined, limit: number) => Array<{ value: string; cursor: Cursor }>

interface Tracked {
  filter: ColdIdFilter
  full: boolean
}

export class ColdFilters {
  private readonly tracked = new Map<string, Tracked>()
  private readonly fills: Array<() => boolean> = []
  private filling: Promise<void> | undefined
  private closed = false

  constructor(private readonly pageRows = FILL_PAGE_ROWS) {}

  has(name: string): boolean {
    return this.tracked.has(name)
  }

  /** A filter of exactly these values, full at once. */
  trackGiven(name: string, values: readonly string[]): void {
    const filter = new ColdIdFilter(values.length)
    for (const value of values) filter.add(value)
    this.tracked.set(name, { filter, full: true })
  }

  /** A filter sized for `expected` values, filled from `page` in the background. */
  trackStored<Cursor>(name: string, expected: number, page: ValuePage<Cursor>): void {
    const entry: Tracked = { filter: new ColdIdFilter(expected), full: false }
    this.tracked.set(name, entry)
    let after: Cursor | undefined
    this.fills.push(() => {
      // Dropped (or tracked afresh) meanwhile: this fill is for nothing now.
      if (this.tracked.get(name) !== entry) return true
      const rows = page(after, this.pageRows)
      for (const row of rows) entry.filter.add(row.value)
      after = rows[rows.length - 1]?.cursor ?? after
      if (rows.length < this.pageRows) entry.full = true
      return entry.full
    })
    this.filling ??= this.fillInTurns()
  }

  untrack(name: string): void {
    this.tracked.delete(name)
  }

  /** A value made cold: from now on its filter (full or filling) may hold it. */
  add(name: string, value: string): void {
    this.tracked.get(name)?.filter.add(value)
  }

  /** False when SQLite certainly holds no such value; true when it may (or no full filter says). */
  mayHold(name: string, value: string): boolean {
    const entry = this.tracked.get(name)
    return entry?.full !== true || entry.filter.mayHold(value)
  }

  get size(): number {
    return this.tracked.size
  }

  /** Resolves once every filter is full (or the store closed). */
  filled(): Promise<void> {
    return this.filling ?? Promise.resolve()
  }

  /** Stops filling: the connection the pages read is about to close. */
  close(): void {
    this.closed = true
  }

  /**
   * Runs one turn of a fill: true when the filter is full, or when its page failed (it then stays
   * unfilled, every question about it going to SQLite, which answers the reads as before).
   */
  private filledWithoutFailure(fill: () => boolean): boolean {
    try {
      return fill()
    } catch {
      return true
    }
  }

  private async fillInTurns(): Promise<void> {
    try {
      let pauseMs = 0
      while (!this.closed && this.fills.length > 0) {
        await new Promise<void>((resolve) => setTimeout(resolve, pauseMs))
        if (this.closed) return
        const fill = this.fills[0] as () => boolean
        const started = performance.now()
        if (this.filledWithoutFailure(fill)) this.fills.shift()
        pauseMs = performance.now() - started
      }
    } finally {
      this.filling = undefined
    }
  }
}
