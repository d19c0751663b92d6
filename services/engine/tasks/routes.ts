/** `POST /task/:taskId/run/:functionId` and `POST /task/:taskId/commit`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { commitTask, runTaskFunction } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'
import { TaskService } from './service.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'

async function taskRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new TaskService(engineDependencies(fastify))
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // Both routes require the user header: identity has resolved the actor.
  typed.route({
    ...routeFrom(runTaskFunction),
    handler: async (request) =>
      service.runFunction(
        requireActor(request),
        request.params.taskId,
        request.params.functionId,
        request.body,
        request.headers.additionalheaders,
      ),
  })
  typed.route({
    ...routeFrom(commitTask),
    handler: async (request) =>
      service.commit(requireActor(request), request.params.taskId, request.body, request.headers.additionalheaders),
  })
}

export default fp(taskRoutes, {
  name: 'engine-task-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'identity'],
})
