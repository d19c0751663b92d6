/** `POST /message/correlate` (docs/api.md#messages): a message delivered to the thread waiting for it. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { correlateMessage } from '../../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../../plugins/identity/actor.js'
import { routeFrom } from '../../../../lib/server/route.js'

async function messageRoutes(fastify: FastifyInstance): Promise<void> {
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  typed.route({
    ...routeFrom(correlateMessage),
    // The same key, caller and body answers the first answer again (lifecycle/idempotent-start.ts).
    ...fastify.idempotentStarts.hooks(),
    handler: async (request) =>
      fastify.messageCorrelation.correlate(requireActor(request), request.body, request.headers.additionalheaders),
  })
}

export default fp(messageRoutes, {
  name: 'engine-message-routes',
  dependencies: ['waits', 'idempotent-starts', 'identity', 'errors'],
})
