/**
 * The start-up every entry point shares: the config is read and validated once (exit 1 naming a
 * bad variable), one store is opened, each service logs to stdout and into its ring and listens on
 * its port, and SIGTERM/SIGINT close everything gracefully (servers first, the store last).
 * `start` runs one service on this thread (`npm run start:gateway` / `start:engine`); the
 * all-in-one (all-in-one.ts) runs the engine here and the gateway on a worker thread.
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import pino, { type DestinationStream, type Logger } from 'pino'
import { type Config, ConfigError, type LogLevel, parseConfig } from '../lib/config/config.js'
import { createLogger } from '../plugins/logging/logger.js'
import { LogRing, type LogRings, ringDestination } from '../plugins/logging/ring.js'
import { type Closable, closeOnSignals, type ShutdownOptions } from '../lib/server/start.js'
import { listenOnUnixSocket } from '../lib/server/unix-socket.js'
import { openStore } from '../store/open.js'
import type { Store } from '../store/port.js'
import { type BuildOptions, buildService, type ServiceKind } from './build.js'
import { ENGINE_SERVICE_NAME } from './engine/operations/health-routes.js'
import { GATEWAY_SERVICE_NAME } from './gateway/health/routes.js'

/** What a process sets up before its services. */
export interface ProcessBase {
  config: Config
  /** The process's one writer of stdout: every service's lines end here, whichever thread logs them. */
  stdout: DestinationStream
  logger: Logger
  store: Store
}

/** Where a server of this process is reached from this process (a wildcard address via loopback). */
function localUrlOf(address: AddressInfo): string {
  if (address.address === '0.0.0.0' || address.address === '::') return `http://127.0.0.1:${address.port}`
  return address.family === 'IPv6' ? `http://[${address.address}]:${address.port}` : `http://${address.address}:${address.port}`
}

/**
 * Why this configuration cannot run the gateway alone, if it cannot: a gateway started alone reads
 * users, models and cache invalidations from the store the engines write, so it needs their
 * MongoDB. An embedded store belongs to one process: the engine's DATA_DIR is locked by the engine,
 * and another DATA_DIR is an empty store of the gateway's own that never sees the engine's data.
 */
export function splitGatewayStoreProblem(config: Config): string | undefined {
  if (config.mongodbUri !== undefined || config.allowGatewayEmbeddedStore) return undefined
  return (
    'A gateway started alone (start:gateway) needs the store its engines use: set MONGODB_URI to the ' +
    "engines' MongoDB. An embedded store (DATA_DIR) belongs to one process, so the gateway would either " +
    "find the engine's locked or serve an empty one of its own. Run `npm start` for gateway and engine on " +
    'one embedded store, or set ALLOW_GATEWAY_EMBEDDED_STORE=true for a gateway on a store of its own.'
  )
}

/**
 * Config, stdout, the process logger and the store; a bad config (or one `refuse` names a problem
 * of) or a store that cannot open exits 1 with a message.
 */
export async function openProcessBase(refuse: (config: Config) => string | undefined = () => undefined): Promise<ProcessBase> {
  let config: Config
  try {
    config = parseConfig(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  const problem = refuse(config)
  if (problem !== undefined) {
    process.stderr.write(`${problem}\n`)
    process.exit(1)
  }
  const stdout = pino.destination({ sync: false })
  const logger = createLogger({ level: config.logLevel, destination: stdout })
  try {
    const store = await openStore({
      mongodbUri: config.mongodbUri,
      mongodbMaxTimeMs: config.mongodbMaxTimeMs,
      dataDir: config.dataDir,
      logger,
    })
    return { config, stdout, logger, store }
  } catch (error) {
    process.stderr.write(`Cannot open the store: ${(error as Error).message}\n`)
    process.exit(1)
  }
}

/** The log stream's name of each service's lines. */
export const LOG_SERVICE: Record<ServiceKind, keyof LogRings> = { engine: 'wfm', gateway: 'fm' }

/** A service's logger: its lines go on to `next` (stdout, or a relay to it) and into `ring`, which its log stream reads. */
export function serviceLogger(kind: ServiceKind, level: LogLevel, ring: LogRing, next: DestinationStream): Logger {
  const logger = createLogger({ level, destination: ringDestination(ring, next) })
  return logger.child({ service: kind === 'engine' ? ENGINE_SERVICE_NAME : GATEWAY_SERVICE_NAME })
}

export interface ServingService {
  app: FastifyInstance
  /** Where this process reaches the service. */
  localUrl: string
  /** Closed before the app: its listeners (the engine's ENGINE_SOCKET), then the app itself. */
  closables: Closable[]
}

/** Builds the service and listens on its configured port (the engine on ENGINE_SOCKET too, when set). */
export async function serve(kind: ServiceKind, options: BuildOptions): Promise<ServingService> {
  const app = await buildService(kind, options)
  await app.listen({ port: kind === 'engine' ? options.config.enginePort : options.config.gatewayPort, host: options.config.host })
  const socketPath = kind === 'engine' ? options.config.engineSocket : undefined
  const closables: Closable[] = socketPath ? [await listenOnUnixSocket(app.server, socketPath), app] : [app]
  return { app, localUrl: localUrlOf(app.server.address() as AddressInfo), closables }
}

export function shutdownLog(logger: Logger): ShutdownOptions['log'] {
  return { info: (message) => logger.info(message), error: (object, message) => logger.error(object, message) }
}

/** One service on this thread, the production shape. */
export async function start(kind: ServiceKind): Promise<void> {
  const { config, stdout, logger, store } = await openProcessBase(kind === 'gateway' ? splitGatewayStoreProblem : undefined)
  // Listening before the signals are handled would let a SIGTERM that comes just after the service
  // said it listens kill it outright, the store left unclosed: the handler comes first, and closes
  // whatever has started by the time a signal arrives (servers first, the store last).
  const closables: Closable[] = [store]
  closeOnSignals({ closables, log: shutdownLog(logger) })
  const ring = new LogRing()
  const service = await serve(kind, {
    config,
    store,
    logger: serviceLogger(kind, config.logLevel, ring, stdout),
    logRings: { [LOG_SERVICE[kind]]: ring },
  })
  closables.unshift(...service.closables)
}
