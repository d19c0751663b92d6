/**
 * `POST /getConstantValue`: the value of `<appId>:<name>` in the user's tenant (organization and
 * app), as flows read it (ProcessModels.constant: kept per tenant until a deploy); `result` absent
 * when there is none, when the id names another app, or when the request names another app.
 * `processInstanceId` is required by the contract and not used in the lookup (docs/reference/data.md#constants).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { getConstantValue } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function constantRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(getConstantValue),
    handler: async (request) => {
      const { appId, constantId } = request.body
      // The route requires the user header: identity has resolved the actor.
      const actor = requireActor(request)
      const prefix = `${appId}:`
      if (actor.appId !== appId || !constantId.startsWith(prefix)) return {}
      const result = await fastify.processModels.constant(actor, constantId.slice(prefix.length))
      return result === null ? {} : { result }
    },
  })
}

export default fp(constantRoutes, { name: 'engine-constant-routes', dependencies: ['process-models', 'identity'] })
