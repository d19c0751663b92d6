/**
 * `GET /metrics` and the request histogram of a service. Every answered request is observed in
 * `http_server_request_duration_seconds` by route template (never the URL), method and status code.
 * The exposition is open unless METRICS_TOKEN is set; then it needs `authorization: Bearer <token>`,
 * compared in constant time. With metrics off (METRICS_ENABLED=false) no hook is added and the route
 * answers 404, so nothing is measured on the request path.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorCode } from '../../openapi/generated/errors.js'
import type { GeneratedRoute } from '../../lib/server/route.js'
import { routeFrom } from '../../lib/server/route.js'
import type { EngineMetrics } from '../../lib/telemetry/engine-metrics.js'
import type { GatewayMetrics } from '../../lib/telemetry/gateway-metrics.js'
import type { ServiceMetrics } from '../../lib/telemetry/service-metrics.js'
import { bearerToken, tokenMatcher } from '../identity/admin-token.js'

declare module 'fastify' {
  interface FastifyInstance {
    /** The engine's workflow metrics; null on the gateway and when metrics are off. */
    engineMetrics: EngineMetrics | null
    /** The gateway's proxy metrics; null on the engine and when metrics are off. */
    gatewayMetrics: GatewayMetrics | null
  }
}

/** The service's metrics (null when they are off), decorated under its kind's name. */
export type ServiceMetricsOption = { kind: 'engine'; metrics: EngineMetrics | null } | { kind: 'gateway'; metrics: GatewayMetrics | null }

export type MetricsPluginOptions = ServiceMetricsOption & {
  token: string | undefined
  /** The service's generated `GET /metrics` route. */
  route: GeneratedRoute
  codes: { unauthorized: ErrorCode; notFound: ErrorCode }
}

async function metricsPlugin(fastify: FastifyInstance, options: MetricsPluginOptions): Promise<void> {
  const { codes } = options
  const metrics: ServiceMetrics | null = options.metrics
  fastify.decorate('engineMetrics', options.kind === 'engine' ? options.metrics : null)
  fastify.decorate('gatewayMetrics', options.kind === 'gateway' ? options.metrics : null)
  const tokenMatches = options.token === undefined ? undefined : tokenMatcher(options.token)
  if (metrics) {
    // A callback hook: nothing to await, so no promise per request.
    fastify.addHook('onResponse', (request, reply, done) => {
      metrics.httpRequest(request.routeOptions.url, request.method, reply.statusCode, reply.elapsedTime / 1000)
      done()
    })
  }
  fastify.route({
    ...routeFrom(options.route),
    handler: async (request, reply) => {
      if (!metrics) throw fastify.fail(codes.notFound, { args: [`${request.method} ${request.url} (METRICS_ENABLED=false)`] })
      if (tokenMatches !== undefined) {
        const given = bearerToken(request)
        if (given === undefined || !tokenMatches(given))
          throw fastify.fail(codes.unauthorized, { parameters: { field: 'headers.authorization' } })
      }
      const exposition = await metrics.exposition()
      return reply.type(metrics.contentType).send(exposition)
    },
  })
}

export default fp(metricsPlugin, { name: 'metrics', fastify: '5.x', dependencies: ['errors'] })
