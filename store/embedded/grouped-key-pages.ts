/**
 * A page of index entries read as one row: better-sqlite3 makes a Buffer of every BLOB it returns
 * (an ArrayBuffer each, about 1.5 µs and a weak handle for the GC), which for a covered read of
 * keys alone cost more than SQLite's own work. Here SQLite concatenates a page's keys into one BLOB
 * (`group_concat`), with their lengths and ids as JSON arrays, and the keys are cut from it as strings.
 * An aggregate's input order is not documented for a subquery's ORDER BY, so every page is checked
 * to be in index order, and a page that is not is read again entry by entry (docs/performance.md#large-answers).
 */

/** One entry of a page: the document's id and the entry's key. */
export interface KeyEntry {
  id: string
  key: string
}

export interface GroupedRow {
  keys: Buffer | null
  lengths: string
  ids: string
}

/** The grouped form of a page statement that selects `id` and `key` (ordered, limited). */
export function groupedPageSql(pageSql: string): string {
  return `SELECT CAST(group_concat(key, '') AS BLOB) AS keys, json_group_array(length(key)) AS lengths, json_group_array(id) AS ids
    FROM (${pageSql})`
}

/** The page's entries, or undefined when the aggregate did not keep the page's order. */
export function entriesOfGroupedRow(row: GroupedRow, descending: boolean): KeyEntry[] | undefined {
  const ids = JSON.parse(row.ids) as string[]
  if (row.keys === null || ids.length === 0) return []
  const lengths = JSON.parse(row.lengths) as number[]
  // Keys are UTF-16BE (journal.ts keyBlob): swapped once to read them all, then back.
  const blob = row.keys.swap16()
  const entries: KeyEntry[] = new Array<KeyEntry>(ids.length)
  let at = 0
  for (let i = 0; i < ids.length; i++) {
    const end = at + (lengths[i] as number)
    entries[i] = { id: ids[i] as string, key: blob.toString('utf16le', at, end) }
    at = end
  }
  blob.swap16()
  return inIndexOrder(entries, descending) ? entries : undefined
}

/** Are the entries in the order of the page statement: by key, then id (both descending or both ascending)? */
function inIndexOrder(entries: readonly KeyEntry[], descending: boolean): boolean {
  for (let i = 1; i < entries.length; i++) {
    const before = entries[i - 1] as KeyEntry
    const entry = entries[i] as KeyEntry
    const [low, high] = descending ? [entry, before] : [before, entry]
    if (low.key > high.key || (low.key === high.key && low.id >= high.id)) return false
  }
  return true
}
