/**
 * Runs an async pass every `intervalMs` (measured from the end of the previous one, so passes never
 * overlap), on an unref'd timer that `stop()` clears: a stopped loop leaves nothing behind.
 */
export class PollLoop {
  private timer: NodeJS.Timeout | undefined
  private current: Promise<void> | undefined
  private running = false

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<void>,
    private readonly onError: (error: unknown) => void,
  ) {}

  /** True while a timer for the next pass is set (never after `stop()`). */
  get timerPending(): boolean {
    return this.timer !== undefined
  }

  start(): void {
    if (this.running) return
    this.running = true
    this.schedule(0)
  }

  /** Runs the next pass now rather than at the end of the interval (no-op while one runs). */
  wake(): void {
    if (this.running && this.current === undefined) this.schedule(0)
  }

  /** Stops; waits for a running pass at most `graceMs`. */
  async stop(graceMs: number): Promise<void> {
    this.running = false
    clearTimeout(this.timer)
    this.timer = undefined
    if (this.current === undefined) return
    let grace: NodeJS.Timeout | undefined
    const graceOver = new Promise<void>((resolve) => {
      grace = setTimeout(resolve, graceMs)
      grace.unref()
    })
    await Promise.race([this.current, graceOver])
    clearTimeout(grace)
  }

  private schedule(delayMs: number): void {
    clearTimeout(this.timer)
    this.timer = setTimeout(() => void this.tick(), delayMs)
    this.timer.unref()
  }

  private async tick(): Promise<void> {
    this.timer = undefined
    if (!this.running || this.current !== undefined) return
    this.current = this.pass().catch(this.onError)
    await this.current
    this.current = undefined
    if (this.running) this.schedule(this.intervalMs)
  }
}
