/**
 * The headless task routes: `/external/task/:taskId/action/:actionType`, `.../assignToUser`,
 * `.../assignToSwimlane`, `DELETE /external/locks/:userId` and `POST /appclose`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  assignTaskToSwimlane,
  assignTaskToUser,
  closeApp,
  releaseUserLocks,
  runExternalTaskAction,
} from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'
import { routeCommandOn } from '../instances/command-routes.js'

/** Every route requires the user header: identity has resolved the actor before a handler runs. */
async function headlessTaskRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.headlessTasks

  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(runExternalTaskAction),
    handler: async (request) =>
      service.act(requireActor(request), request.params.taskId, request.params.actionType, request.body, request.headers.additionalheaders),
  })
  routeCommandOn(fastify, assignTaskToUser, 'taskId', service.assignToUser.bind(service))
  routeCommandOn(fastify, assignTaskToSwimlane, 'taskId', service.assignToSwimlane.bind(service))
  typed.route({
    ...routeFrom(releaseUserLocks),
    handler: async (request) => service.releaseLocksOf(requireActor(request), request.params.userId, request.query.appId),
  })
  typed.route({
    ...routeFrom(closeApp),
    handler: async (request) => service.closeApp(requireActor(request), request.body.taskId, request.body.userId, request.body.appId),
  })
}

export default fp(headlessTaskRoutes, {
  name: 'engine-headless-task-routes',
  dependencies: ['headless-tasks', 'identity', 'errors'],
})
