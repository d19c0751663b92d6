/** `POST /action/complete`, `/action/save`, `/action/function` and `/action/retry`. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { completeAction, retryAction, runActionFunction, saveAction } from '../../../openapi/generated/engine-routes.js'
import { ActionService } from './actions.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'
import { routeCommand } from '../instances/command-routes.js'

async function actionRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new ActionService(engineDependencies(fastify))
  routeCommand(fastify, completeAction, service.complete.bind(service))
  routeCommand(fastify, saveAction, service.save.bind(service))
  routeCommand(fastify, runActionFunction, service.runFunction.bind(service))
  routeCommand(fastify, retryAction, service.retry.bind(service))
}

export default fp(actionRoutes, {
  name: 'engine-action-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'identity'],
})
