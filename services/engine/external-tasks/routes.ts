/**
 * The worker routes (docs/reference/external-tasks.md): `POST /external/worker/fetchAndLock` and
 * `.../:externalTaskId/complete`, `/failure`, `/extendLock`, `/unlock`. Their contracts require the
 * user header: identity has resolved the actor before a handler runs.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  completeExternalTask,
  extendExternalTaskLock,
  fetchAndLockExternalTasks,
  reportExternalTaskFailure,
  unlockExternalTask,
} from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function externalTaskRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.externalTaskService
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(fetchAndLockExternalTasks),
    handler: async (request, reply) => {
      // A client that goes away ends its long poll (the response closes before it was written).
      const gone = new AbortController()
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort()
      })
      return service.fetchAndLock(requireActor(request), request.body, gone.signal)
    },
  })
  typed.route({
    ...routeFrom(completeExternalTask),
    handler: async (request) => service.complete(requireActor(request), request.params.externalTaskId, request.body),
  })
  typed.route({
    ...routeFrom(reportExternalTaskFailure),
    handler: async (request) => service.failure(requireActor(request), request.params.externalTaskId, request.body),
  })
  typed.route({
    ...routeFrom(extendExternalTaskLock),
    handler: async (request) => service.extendLock(requireActor(request), request.params.externalTaskId, request.body),
  })
  typed.route({
    ...routeFrom(unlockExternalTask),
    handler: async (request) => service.unlock(requireActor(request), request.params.externalTaskId, request.body),
  })
}

export default fp(externalTaskRoutes, {
  name: 'engine-external-task-routes',
  dependencies: ['external-tasks', 'identity', 'errors'],
})
