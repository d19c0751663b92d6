/**
 * The journal writer's thread: applies each batch the store sends as one SQLite transaction and
 * says when it is durable. SQLite's work (most of a write's cost) runs here, off the thread that
 * serves requests.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { JournalFile } from './journal.js'
import { decodeBatch } from './journal-batch.js'
import type { JournalReply, JournalRequest } from './journal-writer.js'

const port = parentPort
if (!port) throw new Error('journal-thread runs as a worker thread only')

let file: JournalFile | undefined
let openError: Error | undefined
try {
  file = new JournalFile((workerData as { file: string }).file)
} catch (error) {
  openError = error instanceof Error ? error : new Error(String(error))
}

function failure(error: unknown): { message: string; code?: string } {
  const { message, code } = error as { message?: unknown; code?: unknown }
  return { message: typeof message === 'string' ? message : String(error), ...(typeof code === 'string' ? { code } : {}) }
}

port.on('message', (request: JournalRequest) => {
  if (request.kind === 'close') {
    file?.close()
    port.close()
    return
  }
  let reply: JournalReply
  try {
    if (!file) throw openError ?? new Error('the journal is not open')
    file.apply(decodeBatch(request.bytes))
    reply = { seq: request.seq }
  } catch (error) {
    reply = { seq: request.seq, error: failure(error) }
  }
  port.postMessage(reply)
})
