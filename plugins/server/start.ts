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

export function closeOnSignals(options: ShutdownOptions): void {
  let closing = false
  const shutdown = async (signal: string): Promise<void> => {
    if (closing) return
    closing = true
    options.log.info(`${signal} received, shutting down`)
    const force = setTimeout(() => {
      options.log.error({ signal }, 'shutdown took too long, forcing exit')
      process.exit(1)
    }, options.graceMs ?? 10_000)
    force.unref()
    try {
      for (const closable of options.closables) await closable.close()
      process.exit(0)
    } catch (error) {
      options.log.error({ err: error }, 'shutdown failed')
      process.exit(1)
    }
  }
  process.once('SIGTERM', () => void shutdown('SIGTERM'))
  process.once('SIGINT', () => void shutdown('SIGINT'))
}
