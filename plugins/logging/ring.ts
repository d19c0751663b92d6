/**
 * The recent log lines of one service, kept in memory for the log stream endpoint
 * (`GET /cloud/serviceLog/:service`): a bounded ring fed by the service's pino destination, with
 * listeners for the lines that arrive while a stream is open.
 */
import type { DestinationStream } from 'pino'

export interface LogLine {
  /** Grows by one per line, so a reader can tell the lines it has from the ones it has not. */
  sequence: number
  text: string
}

export type LogListener = (line: LogLine) => void

export const DEFAULT_RING_LINES = 2000
/** Longer lines are cut (a stack trace can be long; the ring's memory stays bounded). */
export const MAX_LINE_LENGTH = 16_384

export class LogRing {
  private readonly lines: Array<LogLine | undefined>
  private next = 0
  private sequence = 0
  private readonly listeners = new Set<LogListener>()

  constructor(readonly capacity: number = DEFAULT_RING_LINES) {
    this.lines = new Array<LogLine | undefined>(capacity)
  }

  push(raw: string): void {
    const text = (raw.endsWith('\n') ? raw.slice(0, -1) : raw).slice(0, MAX_LINE_LENGTH)
    if (text.length === 0) return
    const line = { sequence: ++this.sequence, text }
    this.lines[this.next] = line
    this.next = (this.next + 1) % this.capacity
    for (const listener of this.listeners) {
      try {
        listener(line)
      } catch {
        // A reader's failure must never break the service's logging.
      }
    }
  }

  /** The kept lines, oldest first. */
  recent(): LogLine[] {
    const ordered = [...this.lines.slice(this.next), ...this.lines.slice(0, this.next)]
    return ordered.filter((line): line is LogLine => line !== undefined)
  }

  /** Calls `listener` for every new line until the returned function is called. */
  subscribe(listener: LogListener): () => void {
    this.listeners.add(listener)
    return () => void this.listeners.delete(listener)
  }

  get listenerCount(): number {
    return this.listeners.size
  }
}

/** The rings of the services that run in this process: `fm` gateway, `wfm` engine. */
export type LogRings = Partial<Record<'fm' | 'wfm', LogRing>>

/** A pino destination that writes every line on to `next` and keeps it in `ring`. */
export function ringDestination(ring: LogRing, next?: DestinationStream): DestinationStream {
  return {
    write(chunk: string) {
      next?.write(chunk)
      // pino writes one line per call (with its newline); a batch of several is split here.
      for (const line of chunk.split('\n')) ring.push(line)
    },
  }
}
