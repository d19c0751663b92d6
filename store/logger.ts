/** The part of a pino (or Fastify) logger the stores use. */
export interface StoreLogger {
  info(obj: object, msg?: string): void
  warn(obj: object, msg?: string): void
}
