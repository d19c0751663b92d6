/**
 * `npm start` / `make run`: engine + gateway + one embedded (or MongoDB) store in one process. The
 * engine and the store run on the main thread; the gateway on a worker thread, so that the two
 * share the machine's cores (docs/production.md, "The all-in-one"). The gateway reaches the store through a remote
 * store, the engine over HTTP as in a split deployment, and the engine's log lines through its
 * /internal/serviceLog feed.
 */
import type { Config } from '../lib/config/config.js'
import { LogRing } from '../plugins/logging/ring.js'
import { type Closable, closeOnSignals } from '../lib/server/start.js'
import { type GatewayThread, startGatewayThread } from './gateway-thread/thread.js'
import { LOG_SERVICE, openProcessBase, serve, serviceLogger, shutdownLog } from './main.js'

/**
 * The gateway proxies to this process's engine where it really listens (ENGINE_PORT=0 takes any
 * free port) unless ENGINE_URL names another engine, and streams this engine's lines unless
 * LOG_SOURCE_WFM_URL names another source.
 */
function gatewayConfig(config: Config, engineLocalUrl: string): Config {
  return {
    ...config,
    engineUrl: process.env.ENGINE_URL ? config.engineUrl : engineLocalUrl,
    logSourceUrls: { ...config.logSourceUrls, wfm: config.logSourceUrls.wfm ?? `${engineLocalUrl}/internal/serviceLog` },
  }
}

const { config, stdout, logger, store } = await openProcessBase()
// The signals are handled before anything listens (see services/main.ts `start`): what has started
// when one arrives is closed, servers first, the store last.
const closables: Closable[] = [store]
const shutdown = closeOnSignals({ closables, log: shutdownLog(logger) })
const engineRing = new LogRing()
const engine = await serve('engine', {
  config,
  store,
  logger: serviceLogger('engine', config.logLevel, engineRing, stdout),
  logRings: { [LOG_SERVICE.engine]: engineRing },
})
closables.unshift(...engine.closables)

let gateway: GatewayThread
try {
  gateway = await startGatewayThread({ config: gatewayConfig(config, engine.localUrl), store, stdout })
} catch (error) {
  process.stderr.write(`Cannot start the gateway: ${(error as Error).message}\n`)
  await engine.app.close()
  await store.close()
  process.exit(1)
}

closables.unshift(gateway)
// A process whose gateway is gone would still look alive to a supervisor; it ends instead, so the supervisor restarts it.
gateway.onUnexpectedExit((reason) => {
  logger.fatal({ err: reason }, 'the gateway thread stopped')
  void shutdown('the gateway thread stopped', 1)
})
