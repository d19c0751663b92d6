/**
 * Background checkpoints (checkpointer.ts): what the journal commits reaches the database file while
 * the store stays open, though the journal's own automatic checkpoint is far off; closing the store
 * leaves no write-ahead log behind.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import { waitUntil } from '../../services/testing/wait.js'
import { JOURNAL_CHECKPOINT_PAGES } from './journal.js'
import { DATABASE_FILE, EmbeddedStore } from './store.js'

const DOCUMENTS = 500
const TEXT_BYTES = 2_000
const PAGE_BYTES = 4_096

t.test('committed pages reach the database file while the store stays open, and closing leaves no log', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'checkpointer-'))
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }))
  const store = EmbeddedStore.open({ dataDir })
  const file = join(dataDir, DATABASE_FILE)
  const before = statSync(file).size
  const written = DOCUMENTS * TEXT_BYTES
  t.ok(written / PAGE_BYTES < JOURNAL_CHECKPOINT_PAGES / 10, "far below the journal's own checkpoint")
  const pages = store.collection('pages')
  for (let i = 0; i < DOCUMENTS; i += 10) {
    await pages.insertMany(Array.from({ length: 10 }, (_, j) => ({ _id: `page-${i + j}`, text: 'x'.repeat(TEXT_BYTES) })))
  }
  const size = await waitUntil(
    () => statSync(file).size,
    (size) => size >= before + written,
    10_000,
  )
  t.ok(size >= before + written, `the database file grew from ${before} to ${size} bytes with the store open`)
  await store.close()
  t.notOk(existsSync(`${file}-wal`), 'no write-ahead log once closed')
  const reopened = EmbeddedStore.open({ dataDir })
  t.equal(await reopened.collection('pages').countDocuments(), DOCUMENTS, 'every document is there after reopening')
  await reopened.close()
})
