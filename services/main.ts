/**
 * Starts one or both services in this process: the config is read and validated once (exit 1
 * naming a bad variable), one store is opened and shared, each service listens on its port, and
 * SIGTERM/SIGINT close them gracefully (servers first, the store last).
 */
import type { FastifyInstance } from 'fastify'
import { ConfigError, parseConfig } from '../plugins/config/config.js'
import { createLogger } from '../plugins/logging/logger.js'
import { closeOnSignals } from '../plugins/server/start.js'
import { openStore } from '../plugins/store/open.js'
import { buildService, type ServiceKind } from './build.js'
import { ENGINE_SERVICE_NAME } from './engine/health/routes.js'
import { GATEWAY_SERVICE_NAME } from './gateway/health/routes.js'

export async function start(kinds: ServiceKind[]): Promise<void> {
  let config
  try {
    config = parseConfig(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    process.stderr.write(`${error.message}\n`)
    process.exit(1)
  }
  const processLogger = createLogger({ level: config.logLevel })
  let store
  try {
    store = await openStore({ mongodbUri: config.mongodbUri, dataDir: config.dataDir, logger: processLogger })
  } catch (error) {
    process.stderr.write(`Cannot open the store: ${(error as Error).message}\n`)
    process.exit(1)
  }
  const apps: FastifyInstance[] = []
  for (const kind of kinds) {
    const logger = processLogger.child({ service: kind === 'engine' ? ENGINE_SERVICE_NAME : GATEWAY_SERVICE_NAME })
    const app = await buildService(kind, { config, store, logger })
    await app.listen({ port: kind === 'engine' ? config.enginePort : config.gatewayPort, host: config.host })
    apps.push(app)
  }
  closeOnSignals({ closables: [...apps, store], log: { info: (message) => processLogger.info(message), error: (object, message) => processLogger.error(object, message) } })
}
