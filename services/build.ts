/**
 * Builds a service's Fastify instance from its app plugin: the one place (besides tests' use of it)
 * that constructs Fastify, so production and tests run the same options.
 */
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import fp from 'fastify-plugin'
import type { Logger } from 'pino'
import type { Clock } from '../plugins/clock/plugin.js'
import type { Config } from '../lib/config/config.js'
import type { LogRings } from '../plugins/logging/ring.js'
import { closeConnectionsAsTheyFallIdle } from '../lib/server/idle-connections.js'
import { BODY_LIMIT_BYTES, serverOptions } from '../plugins/service-base/server-options.js'
import { discardUnreadBodies } from '../lib/server/unread-body.js'
import type { Store } from '../store/port.js'
import { consoleAddress } from './gateway/console/address.js'
import type { InProcessEngine } from './gateway/proxy/in-process-engine.js'

export type ServiceKind = 'engine' | 'gateway'

export interface BuildOptions {
  config: Config
  store: Store
  logger: Logger
  /** The log rings of the services of this process (read by the log stream endpoints); none in most tests. */
  logRings?: LogRings
  /** Sees every route as it is registered (the contract test compares them with the document). */
  onRoute?: (route: RouteOptions) => void
  /** The engine's clock (tests move it); the system clock when not given. */
  clock?: Clock
  /** A gateway's engine of the same thread, reached without HTTP (the all-in-one); none, the gateway proxies to ENGINE_URL. */
  inProcessEngine?: InProcessEngine
}

export async function buildService(kind: ServiceKind, options: BuildOptions): Promise<FastifyInstance> {
  const app = Fastify({
    ...serverOptions(options.logger),
    ...(kind === 'gateway' ? { rewriteUrl: (request: { url?: string }) => consoleAddress(request.url) } : {}),
  })
  if (options.onRoute) app.addHook('onRoute', options.onRoute)
  closeConnectionsAsTheyFallIdle(app)
  discardUnreadBodies(app, { discardBytes: (request) => request.routeOptions.bodyLimit ?? BODY_LIMIT_BYTES })
  const appOptions = { config: options.config, store: options.store, logRings: options.logRings ?? {} }
  // Each service's code is loaded only where that service runs: a process or thread of one
  // service does not pay for reading and compiling the other's modules at its start.
  if (kind === 'engine') {
    const { default: engineApp } = await import('./engine/app.js')
    await app.register(fp(engineApp, { name: 'engine-app' }), { ...appOptions, clock: options.clock })
  } else {
    const { default: gatewayApp } = await import('./gateway/app.js')
    await app.register(fp(gatewayApp, { name: 'gateway-app' }), { ...appOptions, inProcessEngine: options.inProcessEngine })
  }
  await app.ready()
  return app
}
