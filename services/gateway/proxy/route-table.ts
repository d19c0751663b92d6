/**
 * The proxy's route table: SPEC.md's proxy table as generated from gateway.yaml's `x-proxy`
 * (openapi/generated/proxy-routes.ts), resolved against the configuration — where each route goes on
 * the engine and how long it may take. It is what the gateway's `endpoint` cache holds (DESIGN.md §6).
 */
import type { ProxyRoute } from '../../../openapi/generated/proxy-routes.js'

export interface ProxyTarget {
  operationId: string
  /** The engine path of a request, its parameters filled in (encoded) from the gateway route's. */
  enginePath(params: Readonly<Record<string, string | undefined>>): string
  /** The route's timeout (SPEC.md: 60 s, file operations 300 s) times PROXY_TIMEOUT_SCALE. */
  timeoutMs: number
  /** A success answer streamed untouched (file download bytes) rather than wrapped in the envelope. */
  raw: boolean
}

/** Keyed by `<METHOD> <gateway route url>` (Fastify syntax), as `routeKey` builds it. */
export type ProxyRouteTable = ReadonlyMap<string, ProxyTarget>

export interface RouteTableOptions {
  timeoutScale: number
  /** The path of ENGINE_URL (empty for an origin): engines may sit under a path behind a load balancer. */
  enginePathPrefix: string
}

export function routeKey(method: string, url: string): string {
  return `${method} ${url}`
}

/** `/process/:processInstanceId` -> a function of the params that fills (and encodes) each one. */
function pathTemplate(template: string, prefix: string): ProxyTarget['enginePath'] {
  const segments = template.split('/').map((segment) => (segment.startsWith(':') ? { param: segment.slice(1) } : { literal: segment }))
  return (params) =>
    prefix +
    segments
      .map((segment) => {
        if ('literal' in segment) return segment.literal
        const value = params[segment.param]
        if (value === undefined) throw new Error(`missing path parameter ${segment.param}`)
        return encodeURIComponent(value)
      })
      .join('/')
}

export function buildRouteTable(routes: readonly ProxyRoute[], options: RouteTableOptions): ProxyRouteTable {
  return new Map(
    routes.map((route) => [
      routeKey(route.method, route.url),
      {
        operationId: route.operationId,
        enginePath: pathTemplate(route.engineUrl, options.enginePathPrefix),
        timeoutMs: Math.max(1, Math.round(route.timeoutSeconds * 1000 * options.timeoutScale)),
        raw: route.raw,
      },
    ]),
  )
}
