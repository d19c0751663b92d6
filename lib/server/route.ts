/**
 * Turns a generated route description (openapi/generated/*-routes.ts) into Fastify route options, so
 * a route's method, URL and schemas come from the OpenAPI document and nowhere else.
 */
export type IdentityRequirement = 'required' | 'optional' | 'none'

export interface GeneratedRoute {
  readonly method: string
  readonly url: string
  readonly operationId: string
  readonly identity: IdentityRequirement
  readonly errorCodes: readonly string[]
  readonly schema: object
  readonly raw?: boolean
  /** The operation is an admin endpoint: with ADMIN_TOKEN set it needs `authorization: Bearer <ADMIN_TOKEN>`. */
  readonly adminToken?: boolean
  /** The operation's `security` is empty: nobody needs to authenticate, in any AUTH_MODE (health, settings). */
  readonly public?: boolean
}

export interface RouteConfig {
  operationId: string
  identity: IdentityRequirement
  adminToken?: boolean
  public?: boolean
}

declare module 'fastify' {
  interface FastifyContextConfig {
    operationId?: string
    identity?: IdentityRequirement
    adminToken?: boolean
    public?: boolean
  }
}

export function routeFrom<const Route extends GeneratedRoute>(route: Route) {
  return {
    method: route.method as Route['method'],
    url: route.url as Route['url'],
    schema: route.schema as Route['schema'],
    config: {
      operationId: route.operationId,
      identity: route.identity,
      ...(route.adminToken ? { adminToken: true } : {}),
      ...(route.public ? { public: true } : {}),
    } satisfies RouteConfig,
  }
}
