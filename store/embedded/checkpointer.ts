/**
 * Background checkpoints of the embedded store's write-ahead log. A commit that crosses SQLite's
 * automatic checkpoint threshold copies the log into the database file and syncs it before it
 * returns, and every write waiting for that commit waits for the copy too: the tail of the request
 * latencies (docs/performance.md#background-checkpoints). Here a thread of its own does that copy on
 * its own connection every CHECKPOINT_INTERVAL_MS (a PASSIVE checkpoint, which never blocks the writer). The
 * journal's connection keeps its automatic checkpoint, at JOURNAL_CHECKPOINT_PAGES (journal.ts): it
 * then finds almost everything copied already, and the log starts again from its beginning.
 */
import { Worker } from 'node:worker_threads'

const CHECKPOINT_INTERVAL_MS = 100

export class Checkpointer {
  private readonly worker: Worker
  private readonly exited: Promise<void>

  constructor(file: string) {
    const workerData = { file, intervalMs: CHECKPOINT_INTERVAL_MS }
    this.worker = new Worker(new URL('./checkpoint-thread.js', import.meta.url), { workerData, execArgv: [] })
    // Never what keeps a process alive. A thread that fails has lost nothing (every commit is in the
    // log already), and the journal's own checkpoint still copies the log: the error is not a write's.
    this.worker.unref()
    this.worker.on('error', () => undefined)
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()))
  }

  /** Stops the checkpoints and closes the thread's connection. */
  async close(): Promise<void> {
    // Held until the thread has closed its connection: the process must not end before.
    this.worker.ref()
    this.worker.postMessage('close')
    await this.exited
  }
}
