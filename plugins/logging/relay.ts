/**
 * A pino destination for a worker thread: its lines go to the thread that owns stdout, which
 * writes them with its own. One writer keeps every line whole; two threads writing to the same file
 * descriptor could interleave partial writes. Lines are sent in batches, one message per turn of
 * the event loop, so a busy thread does not pay a message per line.
 */
import type { DestinationStream } from 'pino'

export class RelayDestination implements DestinationStream {
  private pending = ''
  private scheduled = false

  constructor(private readonly send: (lines: string) => void) {}

  write(chunk: string): void {
    this.pending += chunk
    if (this.scheduled) return
    this.scheduled = true
    setImmediate(() => this.flush())
  }

  /** Sends what is pending now (the thread is about to end). */
  flush(): void {
    this.scheduled = false
    if (this.pending === '') return
    const lines = this.pending
    this.pending = ''
    this.send(lines)
  }
}
