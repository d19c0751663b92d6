/**
 * Makes the embedded store's writes durable without blocking the thread that serves requests: a
 * write is applied in memory at once (so every call stays atomic against every other), its journal
 * ops are handed to the journal thread, and the call resolves only once SQLite has committed them.
 *
 * Group commit: a batch leaves once the task its first write was made in has run (with its promise
 * continuations), one batch is in flight at a time, and whatever arrives meanwhile goes out as the
 * next batch, in one transaction. Batches commit in the order the writes were applied, so a write is never durable
 * before one it could have seen. Few, large messages, each one buffer (journal-batch.ts): a message
 * costs both threads far more than the bytes it carries.
 *
 * SQLite's checkpoints, which copy the write-ahead log into the database file, run on a thread of
 * their own (checkpointer.ts), so that no commit waits for one.
 *
 * When a batch fails, every write not yet durable — that batch's and all queued after it — is
 * reverted in memory, newest first, and rejected: memory is back to exactly what SQLite holds.
 */
import { Worker } from 'node:worker_threads'
import { Checkpointer } from './checkpointer.js'
import type { JournalOp } from './journal.js'
import { encodeBatch } from './journal-batch.js'

/** A batch travels as its bytes (journal-batch.ts), transferred to the thread. */
export type JournalRequest = { kind: 'batch'; seq: number; bytes: Uint8Array } | { kind: 'close' }
export interface JournalReply {
  seq: number
  error?: { message: string; code?: string }
}

/** A write that reached memory but not SQLite: rejected with this, and undone. */
export class JournalWriteError extends Error {
  override readonly name = 'JournalWriteError'
  readonly code: string | undefined
  constructor(message: string, code?: string) {
    super(`The embedded store could not save the write: ${message}`)
    this.code = code
  }
}

interface PendingWrite {
  ops: readonly JournalOp[]
  /** Undoes the write's change in memory. */
  revert: () => void
  resolve: () => void
  reject: (error: Error) => void
}

/** Told of every batch SQLite committed: how long the commit took and how many writes it held. */
export type JournalCommitListener = (seconds: number, writes: number) => void

export class JournalWriter {
  private readonly worker: Worker
  private commitListener: JournalCommitListener | undefined
  private sentAt = 0
  private queued: PendingWrite[] = []
  private inFlight: PendingWrite[] | null = null
  private sendScheduled = false
  private seq = 0
  /** Set when the journal thread is gone: every later write fails at once. */
  private broken: Error | undefined
  private closing = false
  private drained: (() => void) | undefined
  private readonly exited: Promise<void>
  private readonly checkpointer: Checkpointer

  constructor(file: string) {
    // Plain Node for the thread: loaders and hooks the process was started with (a test runner's,
    // a profiler's) have nothing to do with writing SQLite.
    this.worker = new Worker(new URL('./journal-thread.js', import.meta.url), { workerData: { file }, execArgv: [] })
    // The thread keeps the process alive only while it holds writes that are not durable yet.
    this.worker.unref()
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()))
    this.checkpointer = new Checkpointer(file)
    this.worker.on('message', (reply: JournalReply) => this.settle(reply))
    this.worker.on('error', (error) => this.fail(error))
    this.worker.once('exit', (code) => {
      if (!this.closing) this.fail(new Error(`the journal thread stopped (exit code ${code})`))
    })
  }

  /** Resolves once `ops` are durable; rejects (after `revert` ran) when they cannot be. */
  append(ops: readonly JournalOp[], revert: () => void): Promise<void> {
    if (this.broken) {
      revert()
      return Promise.reject(new JournalWriteError(this.broken.message))
    }
    return new Promise<void>((resolve, reject) => {
      this.queued.push({ ops, revert, resolve, reject })
      if (!this.inFlight && !this.sendScheduled) {
        this.sendScheduled = true
        process.nextTick(() => this.send())
      }
    })
  }

  /** One listener (the engine's metrics); measuring costs nothing until it is set. */
  onCommit(listener: JournalCommitListener): void {
    this.commitListener = listener
  }

  /** Waits for every write to be durable, then stops the thread. */
  async close(): Promise<void> {
    if (this.inFlight || this.sendScheduled) await new Promise<void>((resolve) => (this.drained = resolve))
    await this.checkpointer.close()
    this.closing = true
    // Held until the thread has closed the file: the process must not end halfway through.
    this.worker.ref()
    if (!this.broken) this.worker.postMessage({ kind: 'close' } satisfies JournalRequest)
    await this.exited
  }

  private send(): void {
    this.sendScheduled = false
    // Everything pending was undone meanwhile (a failed batch): nothing to send.
    if (this.queued.length === 0) return this.idle()
    const batch = this.queued
    this.queued = []
    this.inFlight = batch
    const ops = batch.length === 1 ? (batch[0] as PendingWrite).ops : batch.flatMap((write) => write.ops)
    this.worker.ref()
    if (this.commitListener) this.sentAt = performance.now()
    const bytes = encodeBatch(ops)
    this.worker.postMessage({ kind: 'batch', seq: ++this.seq, bytes } satisfies JournalRequest, [bytes.buffer])
  }

  private settle(reply: JournalReply): void {
    const batch = this.inFlight
    if (!batch || reply.seq !== this.seq) return
    if (reply.error) {
      this.undoPending(new JournalWriteError(reply.error.message, reply.error.code))
    } else {
      this.inFlight = null
      this.commitListener?.((performance.now() - this.sentAt) / 1000, batch.length)
      for (const write of batch) write.resolve()
    }
    if (this.queued.length > 0) this.send()
    else this.idle()
  }

  private fail(error: Error): void {
    this.broken ??= error
    this.undoPending(new JournalWriteError(error.message))
    this.idle()
  }

  /** Every write not yet durable, newest first: undone in memory and rejected. */
  private undoPending(error: JournalWriteError): void {
    const pending = [...(this.inFlight ?? []), ...this.queued]
    this.inFlight = null
    this.queued = []
    for (const write of pending.reverse()) {
      write.revert()
      write.reject(error)
    }
  }

  private idle(): void {
    this.worker.unref()
    const drained = this.drained
    this.drained = undefined
    drained?.()
  }
}
