/**
 * `POST /process/:processInstanceId/suspend`, `.../resume` and `.../cancel`
 * (docs/reference/lifecycle.md#suspending-resuming-cancelling).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { cancelProcess, resumeProcess, suspendProcess } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

/** Every route requires the user header: identity has resolved the actor before a handler runs. */
async function controlRoutes(fastify: FastifyInstance): Promise<void> {
  const control = fastify.processControl
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  for (const [route, operation] of [
    [suspendProcess, 'suspend'],
    [resumeProcess, 'resume'],
    [cancelProcess, 'cancel'],
  ] as const) {
    typed.route({
      ...routeFrom(route),
      handler: async (request) => {
        const body: { reason?: string; appId?: string } = request.body
        return control.run(operation, requireActor(request), request.params.processInstanceId, {
          reason: body.reason,
          appId: body.appId,
          additionalHeaders: request.headers.additionalheaders,
        })
      },
    })
  }
}

export default fp(controlRoutes, { name: 'engine-control-routes', dependencies: ['process-control', 'identity', 'errors'] })
