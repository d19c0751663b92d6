/**
 * Listening and graceful shutdown: on SIGTERM or SIGINT stop accepting, let requests in flight finish,
 * run every close hook (the store flushes and closes last), then exit 0.
 */
export interface Closable {
  close(): Promise<unknown>
}

export interface ShutdownOptions {
  /** Closed in order: servers first, then what they share (the store). */
  closables: Closable[]
  log: { info(message: string): void; error(object: unknown, message: string): void }
  /** A shutdown that takes longer is forced (exit 1). */
  graceMs?: number
}

/**
 * The same orderly shutdown for another reason than a signal (a part of the process died): exits
 * with `exitCode` once everything closed. Only the first shutdown of a process runs.
 */
export type Shutdown = (reason: string, exitCode: 0 | 1) => Promise<void>

export function closeOnSignals(options: ShutdownOptions): Shutdown {
  let closing = false
  const shutdown: Shutdown = async (reason, exitCode) => {
    if (closing) return
    closing = true
    options.log.info(`${reason}, shutting down`)
    const force = setTimeout(() => {
      options.log.error({ reason }, 'shutdown took too long, forcing exit')
      process.exit(1)
    }, options.graceMs ?? 10_000)
    force.unref()
    try {
      for (const closable of options.closables) await closable.close()
      process.exit(exitCode)
    } catch (error) {
      options.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM received', 0))
  process.once('SIGINT', () => void shutdown('SIGINT received', 0))
  return shutdown
}
