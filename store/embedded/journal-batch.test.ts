/**
 * A batch reaches the journal thread as bytes (journal-batch.ts): what the thread decodes must be the
 * ops the writer encoded, field for field, whatever the texts and keys hold.
 */
import t from 'tap'
import type { JournalOp } from './journal.js'
import { decodeBatch, encodeBatch } from './journal-batch.js'

const OPS: JournalOp[] = [
  { collection: 'contexts', id: 's:one', text: '{"_id":"one","note":"naïve — 日本語 😀","q":"\\"quoted\\""}' },
  { collection: 'contexts', id: 's:empty', text: '' },
  { collection: 'taskLocks', id: 's:gone', text: null },
  {
    collection: 'activities',
    id: 's:cold',
    text: '{"_id":"cold"}',
    cold: true,
    keys: [
      ['processInstanceId_1', 's\u0000\u0000x'],
      ['lone', 'a\ud800b'],
    ],
    arrays: [['tags_1', 0]],
    dropsColdKeys: true,
  },
  { collection: 'contexts', indexName: 'by_key', indexSpec: '{"key":{"businessKey":1}}', coldKeys: [['s:cold', 'sLR-1\u0000\u0000']] },
  { collection: 'contexts', indexName: 'gone', indexSpec: null },
  { collection: 'contexts', indexName: 'building', coldKeys: [], arrays: [['building', 1]] },
]

t.test('a batch decodes to the ops it was encoded from', async (t) => {
  t.strictSame(decodeBatch(encodeBatch(OPS)), OPS)
  t.strictSame(decodeBatch(encodeBatch([])), [])
})

t.test("a batch's bytes are a buffer of their own, so that transferring them takes nothing else along", async (t) => {
  const bytes = encodeBatch(OPS)
  t.equal(bytes.byteOffset, 0)
  t.equal(bytes.buffer.byteLength, bytes.byteLength)
})

t.test('a batch decodes from bytes that start inside a larger buffer', async (t) => {
  const bytes = encodeBatch(OPS)
  const larger = new Uint8Array(bytes.byteLength + 16)
  larger.set(bytes, 7)
  t.strictSame(decodeBatch(larger.subarray(7, 7 + bytes.byteLength)), OPS)
})
