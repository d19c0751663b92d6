/**
 * Routes that hand a domain service's command the acting user, the request body and the
 * `additionalheaders` header (actions, notes, the headless task routes), so each route file lists
 * only which route runs which command. Their contracts require the user header: identity has
 * resolved the actor before the handler runs.
 */
import type { Static, TSchema } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest, HTTPMethods } from 'fastify'
import fp from 'fastify-plugin'
import { type Actor, requireActor } from '../../../plugins/identity/actor.js'
import { type GeneratedRoute, routeFrom } from '../../../lib/server/route.js'
import type { AdditionalHeaders } from './loaded-instance.js'
import { ENGINE_DEPENDENCY_PLUGINS, type EngineDependencies, engineDependencies } from './dependencies.js'

/** A generated route with a JSON body and a success answer. */
interface CommandRoute extends GeneratedRoute {
  readonly method: HTTPMethods
  readonly schema: { readonly body: TSchema; readonly params?: TSchema; readonly response: { readonly 200: TSchema } }
}

type BodyOf<Route extends CommandRoute> = Static<Route['schema']['body']>
type ParamsOf<Route extends CommandRoute> = Route['schema']['params'] extends TSchema ? Static<Route['schema']['params']> : never
type AnswerOf<Route extends CommandRoute> = Promise<Static<Route['schema']['response'][200]>>

function registerCommand(fastify: FastifyInstance, route: CommandRoute, run: (actor: Actor, request: FastifyRequest) => Promise<unknown>) {
  fastify.route({ ...routeFrom(route), handler: async (request) => run(requireActor(request), request) })
}

/** Registers `route`, answered by `command(actor, body, additionalHeaders)`. */
export function routeCommand<const Route extends CommandRoute>(
  fastify: FastifyInstance,
  route: Route,
  command: (actor: Actor, body: BodyOf<Route>, additionalHeaders: AdditionalHeaders) => AnswerOf<Route>,
): void {
  // Fastify has validated the body against the route's schema before the handler runs.
  registerCommand(fastify, route, (actor, request) => command(actor, request.body as BodyOf<Route>, request.headers.additionalheaders))
}

/** Registers `route`, answered by `command(actor, the path parameter, body, additionalHeaders)`. */
export function routeCommandOn<const Route extends CommandRoute>(
  fastify: FastifyInstance,
  route: Route,
  parameter: keyof ParamsOf<Route> & string,
  command: (actor: Actor, target: string, body: BodyOf<Route>, additionalHeaders: AdditionalHeaders) => AnswerOf<Route>,
): void {
  registerCommand(fastify, route, (actor, request) => {
    // Fastify has validated the path parameters and the body against the route's schema.
    const target = (request.params as Record<string, string>)[parameter] as string
    return command(actor, target, request.body as BodyOf<Route>, request.headers.additionalheaders)
  })
}

/**
 * The route plugin, named `name`, of a domain service's commands: the service is built from the
 * engine's dependencies and `routeCommands` registers which route runs which of its commands.
 */
export function commandRoutesPlugin<Service>(
  name: string,
  build: (dependencies: EngineDependencies) => Service,
  routeCommands: (fastify: FastifyInstance, service: Service) => void,
): FastifyPluginAsync {
  const plugin: FastifyPluginAsync = async (fastify) => routeCommands(fastify, build(engineDependencies(fastify)))
  return fp(plugin, { name, dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'identity'] })
}
