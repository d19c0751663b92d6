/**
 * pino loggers for both services. Every line logged while serving a request that carried
 * `lplogclientid` has `[CI: <clientId>]` in its message, so the log stream endpoint can pick a
 * client's lines out of the service log; every request line carries `reqId`.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import pino, { type DestinationStream, type Logger } from 'pino'
import type { LogLevel } from '../../lib/config/config.js'
import { DeferredChildLogger } from './deferred-child.js'

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/

export interface LoggerOptions {
  level: LogLevel
  /** Defaults to stdout. */
  destination?: DestinationStream
}

/** The process's root logger; each service logs through a child bound to its name. */
export function createLogger(options: LoggerOptions): Logger {
  return pino({ level: options.level, base: { pid: process.pid } }, options.destination ?? pino.destination({ sync: false }))
}

/** The log client id of a request, when it sent a usable one. */
export function logClientId(request: Pick<IncomingMessage, 'headers'>): string | undefined {
  const header = request.headers.lplogclientid
  const value = Array.isArray(header) ? header[0] : header
  return value !== undefined && CLIENT_ID.test(value) ? value : undefined
}

export function clientMarker(clientId: string): string {
  return `[CI: ${clientId}]`
}

/**
 * Fastify's `childLoggerFactory`: the per-request logger, prefixed with the client marker, made on
 * its first line (deferred-child.ts).
 */
export function requestLoggerFactory(
  logger: FastifyBaseLogger,
  bindings: pino.Bindings,
  childOptions: pino.ChildLoggerOptions,
  rawRequest: IncomingMessage,
): FastifyBaseLogger {
  const clientId = logClientId(rawRequest)
  return new DeferredChildLogger(logger, bindings, clientId ? { ...childOptions, msgPrefix: `${clientMarker(clientId)} ` } : childOptions)
}
