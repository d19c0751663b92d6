/**
 * `npm start` / `make run`: engine + gateway + one embedded (or MongoDB) store in one process
 * (docs/production.md, "The all-in-one"). The engine and the store run on the main thread, and by
 * default so does the gateway, which reaches this engine in-process, without HTTP
 * (services/gateway/proxy/in-process-engine.ts): on two cores that costs less than a second thread
 * and a loopback hop (docs/performance.md#the-gateway-on-the-engines-thread). With
 * ALL_IN_ONE_GATEWAY=thread the gateway runs on a worker thread, reaching the store through a remote
 * store and the engine over HTTP as in a split deployment. Either way it reads the engine's log
 * lines from its /internal/serviceLog feed.
 */
import type { FastifyInstance } from 'fastify'
import type { Config } from '../lib/config/config.js'
import { LogRing } from '../plugins/logging/ring.js'
import { type Closable, closeOnSignals } from '../lib/server/start.js'
import { startGatewayThread } from './gateway-thread/thread.js'
import { LOG_SERVICE, openProcessBase, serve, serviceLogger, shutdownLog } from './main.js'

/** Whether ENGINE_URL names an engine for the gateway other than this process's. */
function engineElsewhere(): boolean {
  return Boolean(process.env.ENGINE_URL)
}

/**
 * The gateway proxies to this process's engine where it really listens (ENGINE_PORT=0 takes any
 * free port) unless ENGINE_URL names another engine, and streams this engine's lines unless
 * LOG_SOURCE_WFM_URL names another source.
 */
function gatewayConfig(config: Config, engineLocalUrl: string): Config {
  return {
    ...config,
    engineUrl: engineElsewhere() ? config.engineUrl : engineLocalUrl,
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

/** The gateway on a worker thread of its own (ALL_IN_ONE_GATEWAY=thread), on the store through a remote store. */
async function gatewayThread(engineLocalUrl: string): Promise<Closable[]> {
  const gateway = await startGatewayThread({ config: gatewayConfig(config, engineLocalUrl), store, stdout })
  // A process whose gateway is gone would still look alive to a supervisor; it ends instead, so the supervisor restarts it.
  gateway.onUnexpectedExit((reason) => {
    logger.fatal({ err: reason }, 'the gateway thread stopped')
    void shutdown('the gateway thread stopped', 1)
  })
  return [gateway]
}

/** The gateway on this thread (the default): this engine reached in-process, unless ENGINE_URL names another. */
async function gatewayOnThisThread(engineApp: FastifyInstance, engineLocalUrl: string): Promise<Closable[]> {
  const ring = new LogRing()
  const gateway = await serve('gateway', {
    config: gatewayConfig(config, engineLocalUrl),
    store,
    logger: serviceLogger('gateway', config.logLevel, ring, stdout),
    logRings: { [LOG_SERVICE.gateway]: ring },
    ...(engineElsewhere() ? {} : { inProcessEngine: engineApp }),
  })
  return gateway.closables
}

try {
  const gateway =
    config.allInOneGateway === 'thread' ? await gatewayThread(engine.localUrl) : await gatewayOnThisThread(engine.app, engine.localUrl)
  closables.unshift(...gateway)
} catch (error) {
  process.stderr.write(`Cannot start the gateway: ${(error as Error).message}\n`)
  await engine.app.close()
  await store.close()
  process.exit(1)
}
