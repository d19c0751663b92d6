/**
 * `POST /query/activeProcessIds`, `/query/processIdsUpdatedBetween`, `/query/overdueTasks`,
 * `/query/processInstanceContextAndActivity`, and the paged `/query/myTasks`, `/query/instances`
 * and `/query/incidents`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import {
  queryActiveProcesses,
  queryIncidents,
  queryInstances,
  queryMyTasks,
  queryOverdueTasks,
  queryProcessesUpdatedBetween,
  queryProcessInstanceContextAndActivity,
} from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { builtAnswer } from '../../../lib/server/built-answer.js'
import { routeFrom } from '../../../lib/server/route.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'
import { PagedQueryService } from './paged.js'
import { QueryService } from './service.js'

async function queryRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new QueryService({ ...engineDependencies(fastify), queries: fastify.processQueries })
  const paged = new PagedQueryService({ ...engineDependencies(fastify), queries: fastify.processQueries })
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // Every query requires the user header: identity has resolved the actor.
  typed.route({
    ...routeFrom(queryActiveProcesses),
    handler: async (request, reply) => builtAnswer(reply, await service.activeProcesses(requireActor(request), request.body)),
  })
  typed.route({
    ...routeFrom(queryProcessesUpdatedBetween),
    handler: async (request, reply) => builtAnswer(reply, await service.updatedBetween(requireActor(request), request.body)),
  })
  typed.route({ ...routeFrom(queryOverdueTasks), handler: async (request) => service.overdueTasks(requireActor(request), request.body) })
  typed.route({
    ...routeFrom(queryProcessInstanceContextAndActivity),
    handler: async (request) => service.contextAndActivity(requireActor(request), request.body),
  })
  typed.route({ ...routeFrom(queryMyTasks), handler: async (request) => paged.myTasks(requireActor(request), request.body) })
  typed.route({ ...routeFrom(queryInstances), handler: async (request) => paged.instances(requireActor(request), request.body) })
  typed.route({ ...routeFrom(queryIncidents), handler: async (request) => paged.incidents(requireActor(request), request.body) })
}

export default fp(queryRoutes, {
  name: 'engine-query-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'process-queries-repository', 'identity'],
})
