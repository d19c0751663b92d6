/**
 * The headless routes: `/external/task/:taskId/action/:actionType`, `.../assignToUser`,
 * `.../assignToSwimlane`, `/external/function/:functionId/execute`, `/external/process/changeStep`,
 * `DELETE /external/locks/:userId` and `POST /appclose`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  assignTaskToSwimlane,
  assignTaskToUser,
  changeProcessStep,
  closeApp,
  executeExternalFunction,
  releaseUserLocks,
  runExternalTaskAction,
} from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/plugin.js'
import { routeFrom } from '../../../lib/server/route.js'

/** Every route requires the user header: identity has resolved the actor before a handler runs. */
async function externalRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.externalService

  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(runExternalTaskAction),
    handler: async (request) =>
      service.act(requireActor(request), request.params.taskId, request.params.actionType, request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(assignTaskToUser),
    handler: async (request) =>
      service.assignToUser(requireActor(request), request.params.taskId, request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(assignTaskToSwimlane),
    handler: async (request) =>
      service.assignToSwimlane(requireActor(request), request.params.taskId, request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(executeExternalFunction),
    handler: async (request) =>
      service.executeFunction(requireActor(request), request.params.functionId, request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(changeProcessStep),
    handler: async (request) => service.changeStep(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(releaseUserLocks),
    handler: async (request) => service.releaseLocksOf(requireActor(request), request.params.userId, request.query.appId),
  })
  typed.route({
    ...routeFrom(closeApp),
    handler: async (request) => service.closeApp(requireActor(request), request.body.taskId, request.body.userId, request.body.appId),
  })
}

export default fp(externalRoutes, {
  name: 'engine-external-routes',
  dependencies: ['external-service', 'identity', 'errors'],
})
