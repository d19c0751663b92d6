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
import { routeCommand, routeCommandOn } from '../instances/command-routes.js'

/** Every route requires the user header: identity has resolved the actor before a handler runs. */
async function externalRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.externalService

  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(runExternalTaskAction),
    handler: async (request) =>
      service.act(requireActor(request), request.params.taskId, request.params.actionType, request.body, request.headers.additionalheaders),
  })
  routeCommandOn(fastify, assignTaskToUser, 'taskId', service.assignToUser.bind(service))
  routeCommandOn(fastify, assignTaskToSwimlane, 'taskId', service.assignToSwimlane.bind(service))
  routeCommandOn(fastify, executeExternalFunction, 'functionId', service.executeFunction.bind(service))
  routeCommand(fastify, changeProcessStep, service.changeStep.bind(service))
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
