/** `POST /action/complete`, `/action/save`, `/action/function` and `/action/retry`. */
import { completeAction, retryAction, runActionFunction, saveAction } from '../../../openapi/generated/engine-routes.js'
import { ActionService } from './actions.js'
import { commandRoutesPlugin, routeCommand } from '../instances/command-routes.js'

export default commandRoutesPlugin(
  'engine-action-routes',
  (dependencies) => new ActionService(dependencies),
  (fastify, service) => {
    routeCommand(fastify, completeAction, service.complete.bind(service))
    routeCommand(fastify, saveAction, service.save.bind(service))
    routeCommand(fastify, runActionFunction, service.runFunction.bind(service))
    routeCommand(fastify, retryAction, service.retry.bind(service))
  },
)
