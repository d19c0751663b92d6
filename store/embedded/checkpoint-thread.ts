/**
 * The checkpointer's thread (checkpointer.ts): copies what the write-ahead log holds into the
 * database file on its own connection, every `intervalMs`, so that the journal's commits never wait
 * for that copy and its sync.
 */
import Database from 'better-sqlite3'
import { parentPort, workerData } from 'node:worker_threads'

const port = parentPort
if (!port) throw new Error('checkpoint-thread runs as a worker thread only')
const { file, intervalMs } = workerData as { file: string; intervalMs: number }

// The store's thread created the file and put it in WAL mode before starting this thread.
const db = new Database(file, { fileMustExist: true })
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)')

const timer = setInterval(() => {
  try {
    checkpoint.run()
  } catch {
    // Busy or failing now: the next tick tries again, and the journal's own checkpoint is the backstop.
  }
}, intervalMs)

port.on('message', () => {
  clearInterval(timer)
  db.close()
  port.close()
})
