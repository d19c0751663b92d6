/**
 * Starts one or both services in this process: the config is read and validated once (exit 1
 * naming a bad variable), one store is opened and shared, each service listens on its port, and
 * SIGTERM/SIGINT close them gracefully (servers first, the store last).
 */
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import pino from 'pino'
import { type Config, ConfigError, parseConfig } from '../plugins/config/config.js'
import { createLogger } from '../plugins/logging/logger.js'
import { LogRing, type LogRings, ringDestination } from '../plugins/logging/ring.js'
import { type Closable, closeOnSignals } from '../plugins/server/start.js'
import { listenOnUnixSocket } from '../plugins/server/unix-socket.js'
import { openStore } from '../plugins/store/open.js'
import { buildService, type ServiceKind } from './build.js'
import { ENGINE_SERVICE_NAME } from './engine/health/routes.js'
import { GATEWAY_SERVICE_NAME } from './gateway/health/routes.js'

/** Where a server of this process is reached from this process (a wildcard address via loopback). */
function localUrlOf(address: AddressInfo): string {
  if (address.address === '0.0.0.0' || address.address === '::') return `http://127.0.0.1:${address.port}`
  return address.family === 'IPv6' ? `http://[${address.address}]:${address.port}` : `http://${address.address}:${address.port}`
}

export async function start(kinds: ServiceKind[]): Promise<void> {
  let config: Config
  try {
    config = parseConfig(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  const stdout = pino.destination({ sync: false })
  const processLogger = createLogger({ level: config.logLevel, destination: stdout })
  let store
  try {
    store = await openStore({ mongodbUri: config.mongodbUri, dataDir: config.dataDir, logger: processLogger })
  } catch (error) {
    process.stderr.write(`Cannot open the store: ${(error as Error).message}\n`)
    process.exit(1)
  }
  // Each service's lines go to stdout and into its ring, which the log stream endpoints read.
  const logRings: LogRings = {}
  const services = kinds.map((kind) => {
    const ring = new LogRing()
    logRings[kind === 'engine' ? 'wfm' : 'fm'] = ring
    const logger = createLogger({ level: config.logLevel, destination: ringDestination(ring, stdout) })
    return { kind, logger: logger.child({ service: kind === 'engine' ? ENGINE_SERVICE_NAME : GATEWAY_SERVICE_NAME }) }
  })
  const apps: FastifyInstance[] = []
  const sockets: Closable[] = []
  for (const { kind, logger } of services) {
    const app = await buildService(kind, { config, store, logger, logRings })
    await app.listen({ port: kind === 'engine' ? config.enginePort : config.gatewayPort, host: config.host })
    if (kind === 'engine' && config.engineSocket) sockets.push(await listenOnUnixSocket(app.server, config.engineSocket))
    // In one process the gateway proxies to this engine where it really listens (ENGINE_PORT=0 takes
    // any free port), unless ENGINE_URL names another engine.
    const address = app.server.address()
    if (kind === 'engine' && !process.env.ENGINE_URL && typeof address === 'object' && address) config = { ...config, engineUrl: localUrlOf(address) }
    apps.push(app)
  }
  closeOnSignals({ closables: [...sockets, ...apps, store], log: { info: (message) => processLogger.info(message), error: (object, message) => processLogger.error(object, message) } })
}
