/** `GET /settings/:file`: a UI settings file as JavaScript. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply } from 'fastify'
import fp from 'fastify-plugin'
import { getSettingsFile } from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'

async function settingsRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(getSettingsFile),
    handler: async (request, reply) => {
      // nosniff on every answer: a browser runs it only as the script (or JSON error) it says it is.
      reply.header('x-content-type-options', 'nosniff')
      const script = await fastify.settings.script(request.params.file, request.headers.referer)
      // x-raw: the success answer is the script, not one of the documented (error) schemas.
      const raw: FastifyReply = reply
      return raw.type('application/javascript; charset=UTF-8').send(script)
    },
  })
}

export default fp(settingsRoutes, { name: 'settings-routes', dependencies: ['settings-service'] })
