/**
 * A page of index entries read as one row (grouped-key-pages.ts): the keys come back exactly, and a
 * page the aggregate did not keep in index order is refused, for the caller to read it entry by entry.
 */
import t from 'tap'
import { entriesOfGroupedRow, type KeyEntry } from './grouped-key-pages.js'
import { keyBlob } from './journal.js'

/** The row SQLite's grouped page statement gives for these entries, in this order. */
function groupedRow(entries: readonly KeyEntry[]): { keys: Buffer | null; lengths: string; ids: string } {
  const blobs = entries.map((entry) => keyBlob(entry.key))
  return {
    keys: entries.length === 0 ? null : Buffer.concat(blobs),
    lengths: JSON.stringify(blobs.map((blob) => blob.length)),
    ids: JSON.stringify(entries.map((entry) => entry.id)),
  }
}

const ascending: KeyEntry[] = [
  { id: 'a', key: 's\u0001alpha\u0000' },
  { id: 'b', key: 's\u0001alpha\u0000' },
  { id: 'a', key: 's\u0001caf\u00e9 \ud83d\ude00\u0000' },
  { id: 'c', key: 'z\uffff' },
]

t.test('a page read as one row gives back each entry exactly, any character included', async (t) => {
  t.same(entriesOfGroupedRow(groupedRow(ascending), false), ascending)
  const descending = [...ascending].reverse()
  t.same(entriesOfGroupedRow(groupedRow(descending), true), descending)
})

t.test('an empty page is no entries', async (t) => {
  t.same(entriesOfGroupedRow(groupedRow([]), false), [])
})

t.test('a page out of index order is refused, so that it is read again entry by entry', async (t) => {
  t.equal(entriesOfGroupedRow(groupedRow([ascending[1]!, ascending[0]!]), false), undefined, 'ties out of id order')
  t.equal(entriesOfGroupedRow(groupedRow([ascending[2]!, ascending[0]!]), false), undefined, 'keys out of order')
  t.equal(entriesOfGroupedRow(groupedRow(ascending), true), undefined, 'ascending where descending was asked')
})

t.test('reading a page leaves its BLOB as SQLite gave it', async (t) => {
  const row = groupedRow(ascending)
  const before = Buffer.from(row.keys as Buffer)
  entriesOfGroupedRow(row, false)
  t.same(row.keys, before)
})
