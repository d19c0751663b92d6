/** `/external/function/:functionId/execute`: runs a model's or an app's function (service.ts). */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { executeExternalFunction } from '../../../openapi/generated/engine-routes.js'
import { routeCommandOn } from '../instances/command-routes.js'

/** The route requires the user header: identity has resolved the actor before the handler runs. */
async function functionRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.functionRuns
  routeCommandOn(fastify, executeExternalFunction, 'functionId', service.executeFunction.bind(service))
}

export default fp(functionRoutes, {
  name: 'engine-function-routes',
  dependencies: ['function-runs', 'identity', 'errors'],
})
