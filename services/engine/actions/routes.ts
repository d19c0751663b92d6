/** `POST /action/complete`, `/action/save`, `/action/function` and `/action/retry`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { completeAction, retryAction, runActionFunction, saveAction } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/plugin.js'
import { routeFrom } from '../../../lib/server/route.js'
import { ActionService } from './service.js'
import { engineDependencies } from '../dependencies.js'

async function actionRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new ActionService(engineDependencies(fastify))
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // Every action route requires the user header: identity has resolved the actor.
  typed.route({
    ...routeFrom(completeAction),
    handler: async (request) => service.complete(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(saveAction),
    handler: async (request) => service.save(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(runActionFunction),
    handler: async (request) => service.runFunction(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(retryAction),
    handler: async (request) => service.retry(requireActor(request), request.body, request.headers.additionalheaders),
  })
}

export default fp(actionRoutes, {
  name: 'engine-action-routes',
  dependencies: [
    'process-models',
    'process-instances',
    'run-environments',
    'authorization',
    'task-locks-repository',
    'sessions',
    'identity',
    'errors',
  ],
})
