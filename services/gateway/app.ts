/**
 * The gateway as one Fastify plugin: service-base first (store, clock, errors in the envelope style,
 * correlation, traces, metrics, docs, caches, identity), then the gateway's repositories, services
 * and routes (the proxy to the engine among them), each registered after the plugins it declares it
 * needs (plugins/service-base/plugin-order.ts).
 */
import type { FastifyInstance } from 'fastify'
import { type GatewayErrorCode, gatewayErrorCatalogue } from '../../openapi/generated/errors.js'
import type { Config } from '../../lib/config/config.js'
import { loadOpenApiDocument, type OpenApiDocument } from '../../plugins/docs/plugin.js'
import type { GenericErrorCodes } from '../../plugins/errors/plugin.js'
import type { IdentityCodes } from '../../plugins/identity/codes.js'
import serviceBase from '../../plugins/service-base/plugin.js'
import { listed, registerInDependencyOrder } from '../../plugins/service-base/plugin-order.js'
import type { LogRings } from '../../plugins/logging/ring.js'
import { GatewayMetrics } from '../../lib/telemetry/gateway-metrics.js'
import { instrumentStore } from '../../store/instrumented.js'
import { Tracing } from '../../lib/telemetry/tracing.js'
import type { Store } from '../../store/port.js'
import { getGatewayMetrics } from '../../openapi/generated/gateway-routes.js'
import cacheRoutes from './cache/routes.js'
import cacheEviction from './cache/service.js'
import consoleRoutes from './console/routes.js'
import readiness from './health/readiness.js'
import health, { GATEWAY_SERVICE_NAME } from './health/routes.js'
import logRoutes from './logs/routes.js'
import modelRepository from './models/repository.js'
import modelRoutes from './models/routes.js'
import modelService from './models/service.js'
import notificationRepository from './notify/repository.js'
import notifyRoutes from './notify/routes.js'
import notificationUpserts from './notify/service.js'
import type { ProxyRouteTable } from './proxy/route-table.js'
import type { InProcessEngine } from './proxy/in-process-engine.js'
import proxy from './proxy/routes.js'
import settingsRoutes from './settings/routes.js'
import settingsService from './settings/service.js'
import subscriptionRepository from './subscriptions/repository.js'
import subscriptionRoutes from './subscriptions/routes.js'
import subscriptionService from './subscriptions/service.js'
import userRepository from './users/repository.js'
import userRoutes from './users/routes.js'
import userService from './users/service.js'

/** The key of the gateway's OpenAPI document in its `swagger` cache (an eviction's `id`). */
export const SWAGGER_CACHE_KEY = 'gateway'

export interface GatewayAppOptions {
  config: Config
  /** An open store shared with other apps of the process; the app does not close it. */
  store: Store
  /** The log rings of the services running in this process (the log stream serves them). */
  logRings: LogRings
  /** The engine of this thread, which the proxy reaches without HTTP (the all-in-one); absent, it proxies to ENGINE_URL. */
  inProcessEngine?: InProcessEngine | undefined
}

export default async function gatewayApp(app: FastifyInstance, options: GatewayAppOptions): Promise<void> {
  const { telemetry } = options.config
  const metrics = telemetry.metricsEnabled ? new GatewayMetrics() : null
  const tracing = await Tracing.create(telemetry, GATEWAY_SERVICE_NAME)
  // Served from the `swagger` cache: after an eviction the document is read from disk again.
  const openApiDocument = (): OpenApiDocument =>
    app.caches.cache<OpenApiDocument>('swagger').getOrCreate(SWAGGER_CACHE_KEY, () => loadOpenApiDocument('gateway'))
  await app.register(serviceBase, {
    // The gateway's store calls are traced, not measured: store metrics are the engine's.
    store: instrumentStore(options.store, { tracing }),
    tracing: { tracing },
    metrics: {
      kind: 'gateway',
      metrics,
      token: telemetry.metricsToken,
      route: getGatewayMetrics,
      codes: { unauthorized: 'fm4014', notFound: 'fm4004' },
    },
    errors: {
      catalogue: gatewayErrorCatalogue,
      codes: {
        validation: 'fm4000',
        malformedBody: 'fm4001',
        notFound: 'fm4004',
        bodyTooLarge: 'fm4013',
        unsupportedMediaType: 'fm4015',
        internal: 'fm5000',
      } satisfies GenericErrorCodes<GatewayErrorCode>,
      style: 'envelope',
      exposeStack: options.config.development,
    },
    jsonDepth: { maxDepth: options.config.maxJsonDepth, code: 'fm4002' satisfies GatewayErrorCode },
    docs: { document: loadOpenApiDocument('gateway'), current: openApiDocument },
    caches: { target: 'fm', types: ['app', 'swagger', 'endpoint', 'users'], pollMs: options.config.cachePollMs },
    identity: {
      auth: options.config.auth,
      adminToken: options.config.adminToken,
      codes: {
        unknownUser: 'fm4012',
        unauthenticated: 'fm4012',
        forbidden: 'fm4030',
        adminToken: 'fm4010',
      } satisfies IdentityCodes<GatewayErrorCode>,
    },
  })
  // Each plugin names what it needs (fastify-plugin's `dependencies`); the order follows from that.
  await registerInDependencyOrder(app, [
    // Repositories and services.
    listed(userRepository),
    listed(userService),
    listed(modelRepository),
    listed(modelService),
    listed(notificationRepository),
    listed(notificationUpserts),
    listed(settingsService),
    listed(cacheEviction),
    listed(subscriptionRepository),
    listed(subscriptionService, { allowedHosts: options.config.webhooks.allowedHosts, enginePort: options.config.enginePort }),
    // Routes: the gateway's own, then the proxy to the engine.
    listed(health),
    listed(readiness, { engine: { url: options.config.engineUrl, socketPath: options.config.engineSocket } }),
    listed(userRoutes),
    listed(modelRoutes),
    listed(notifyRoutes),
    listed(settingsRoutes),
    listed(cacheRoutes),
    listed(subscriptionRoutes),
    listed(logRoutes, { config: options.config, rings: options.logRings }),
    listed(consoleRoutes, { authMode: options.config.auth.mode }),
    listed(proxy, {
      config: options.config,
      endpointCache: app.caches.cache<ProxyRouteTable>('endpoint'),
      metrics,
      inProcessEngine: options.inProcessEngine,
    }),
  ])
}
