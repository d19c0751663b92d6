/**
 * A request's logger that becomes pino's child only when it first writes a line. Fastify asks for a
 * child logger on every request (logger.ts `requestLoggerFactory`), and pino builds one by
 * serializing its bindings; at the level most deployments run, most requests never log a line, so
 * that work would be thrown away (docs/performance.md#the-request-logger-made-on-first-use).
 */
import type { FastifyBaseLogger } from 'fastify'
import type pino from 'pino'

type LevelName = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'
type LogArguments = Parameters<pino.LogFn>

/** Whether `logger` writes lines at `level`: pino's loggers say; any other is asked to write them all. */
function writesAt(logger: FastifyBaseLogger, level: LevelName): boolean {
  const check = (logger as Partial<Pick<pino.Logger, 'isLevelEnabled'>>).isLevelEnabled
  return typeof check !== 'function' || check.call(logger, level)
}

export class DeferredChildLogger implements FastifyBaseLogger {
  private made: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: pino.Bindings,
    private readonly options: pino.ChildLoggerOptions,
  ) {}

  /** pino's child, made once. */
  private logger(): FastifyBaseLogger {
    return (this.made ??= this.parent.child(this.bindings, this.options))
  }

  /** Logs at `level` through the child, made now unless the line would be dropped anyway. */
  private write(level: LevelName, args: LogArguments): void {
    if (!writesAt(this.made ?? this.parent, level)) return
    const child = this.logger()
    ;(child[level] as (...line: LogArguments) => void).apply(child, args)
  }

  get level(): string {
    return (this.made ?? this.parent).level
  }

  /** A level set on the request's logger is the child's own, as with pino's child. */
  set level(level: string) {
    this.logger().level = level
  }

  fatal(...args: LogArguments): void {
    this.write('fatal', args)
  }

  error(...args: LogArguments): void {
    this.write('error', args)
  }

  warn(...args: LogArguments): void {
    this.write('warn', args)
  }

  info(...args: LogArguments): void {
    this.write('info', args)
  }

  debug(...args: LogArguments): void {
    this.write('debug', args)
  }

  trace(...args: LogArguments): void {
    this.write('trace', args)
  }

  silent(): void {}

  child(bindings: pino.Bindings, options?: pino.ChildLoggerOptions): FastifyBaseLogger {
    return this.logger().child(bindings, options)
  }
}
