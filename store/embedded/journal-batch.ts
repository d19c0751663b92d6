/**
 * A journal batch as the bytes the journal writer hands to its thread (journal-writer.ts): one
 * buffer, transferred rather than copied. Structured cloning the ops themselves walks every op and
 * every index key of the batch, on the thread that serves requests, at a cost per value that adds up
 * to more than the bytes it carries (docs/performance.md#the-journals-hand-off-as-one-buffer).
 *
 * Layout: the length of the head (4 bytes, little-endian), the head, then the documents' texts one
 * after the other. The head is the JSON of the ops with each `text` replaced by its length in bytes
 * (or null for a removal), so the texts, which are JSON already, are neither escaped nor parsed again.
 */
import type { JournalOp } from './journal.js'

const HEAD_LENGTH_BYTES = 4

type DocumentOp = Extract<JournalOp, { text: string | null }>

function isDocumentOp(op: JournalOp): op is DocumentOp {
  return 'text' in op
}

/** The bytes of `ops`, in a buffer of their own (it can be transferred). */
export function encodeBatch(ops: readonly JournalOp[]): Uint8Array<ArrayBuffer> {
  let textBytes = 0
  const head = ops.map((op) => {
    if (!isDocumentOp(op) || op.text === null) return op
    const length = Buffer.byteLength(op.text)
    textBytes += length
    return { ...op, text: length }
  })
  const headText = JSON.stringify(head)
  const headBytes = Buffer.byteLength(headText)
  const bytes = Buffer.allocUnsafeSlow(HEAD_LENGTH_BYTES + headBytes + textBytes)
  bytes.writeUInt32LE(headBytes, 0)
  let offset = HEAD_LENGTH_BYTES + bytes.write(headText, HEAD_LENGTH_BYTES)
  for (const op of ops) if (isDocumentOp(op) && op.text !== null) offset += bytes.write(op.text, offset)
  return bytes
}

/** The ops of a batch {@link encodeBatch} wrote. */
export function decodeBatch(encoded: Uint8Array): JournalOp[] {
  const bytes = Buffer.from(encoded.buffer, encoded.byteOffset, encoded.byteLength)
  const headBytes = bytes.readUInt32LE(0)
  let offset = HEAD_LENGTH_BYTES + headBytes
  const head = JSON.parse(bytes.toString('utf8', HEAD_LENGTH_BYTES, offset)) as Array<
    JournalOp | (Omit<DocumentOp, 'text'> & { text: number | null })
  >
  return head.map((op) => {
    if (!('text' in op) || typeof op.text !== 'number') return op as JournalOp
    const text = bytes.toString('utf8', offset, offset + op.text)
    offset += op.text
    return { ...op, text }
  })
}
