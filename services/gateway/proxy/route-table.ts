/**
 * The proxy's route table, as generated from gateway.yaml's `x-proxy`
 * (openapi/generated/proxy-routes.ts), resolved against the configuration — where each route goes on
 * the engine and how long it may take. It is what the gateway's `endpoint` cache holds (docs/reference/gateway.md#caches).
 */
import type { FastifyReplyFromHooks } from '@fastify/reply-from'
import type { ProxyRoute } from '../../../openapi/generated/proxy-routes.js'

export interface ProxyTarget {
  operationId: string
  /** The engine path of a request, its parameters filled in (encoded) from the gateway route's. */
  enginePath(params: Readonly<Record<string, string | undefined>>): string
  /** The route's timeout (60 s, file operations 300 s) times PROXY_TIMEOUT_SCALE. */
  timeoutMs: number
  /** A success answer streamed untouched (file download bytes) rather than wrapped in the envelope. */
  raw: boolean
  /** reply-from's options for the route, made with the table rather than on every request. */
  replyOptions: FastifyReplyFromHooks
}

/** What the proxy's reply-from options of a route depend on. */
export type ForwardingOf = (route: Pick<ProxyTarget, 'timeoutMs' | 'raw'>) => FastifyReplyFromHooks

/** Keyed by `<METHOD> <gateway route url>` (Fastify syntax), as `routeKey` builds it. */
export type ProxyRouteTable = ReadonlyMap<string, ProxyTarget>

export interface RouteTableOptions {
  timeoutScale: number
  /** The path of ENGINE_URL (empty for an origin): engines may sit under a path behind a load balancer. */
  enginePathPrefix: string
  replyOptions: ForwardingOf
}

export function routeKey(method: string, url: string): string {
  return `${method} ${url}`
}

/**
 * `/process/:processInstanceId` -> a function of the params that fills (and encodes) each one. The
 * template is split once into the literal text around its parameters, so that a request only
 * concatenates.
 */
function pathTemplate(template: string, prefix: string): ProxyTarget['enginePath'] {
  const literals = [prefix]
  const names: string[] = []
  template.split('/').forEach((segment, index) => {
    const separator = index === 0 ? '' : '/'
    if (segment.startsWith(':')) {
      literals[literals.length - 1] += separator
      names.push(segment.slice(1))
      literals.push('')
    } else literals[literals.length - 1] += separator + segment
  })
  return (params) => {
    let path = literals[0]!
    for (let index = 0; index < names.length; index++) {
      const value = params[names[index]!]
      if (value === undefined) throw new Error(`missing path parameter ${names[index]}`)
      path += encodeURIComponent(value) + literals[index + 1]!
    }
    return path
  }
}

export function buildRouteTable(routes: readonly ProxyRoute[], options: RouteTableOptions): ProxyRouteTable {
  return new Map(
    routes.map((route) => {
      const forwarding = { timeoutMs: Math.max(1, Math.round(route.timeoutSeconds * 1000 * options.timeoutScale)), raw: route.raw }
      const target: ProxyTarget = {
        operationId: route.operationId,
        enginePath: pathTemplate(route.engineUrl, options.enginePathPrefix),
        ...forwarding,
        replyOptions: options.replyOptions(forwarding),
      }
      return [routeKey(route.method, route.url), target]
    }),
  )
}
