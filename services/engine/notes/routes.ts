/** `POST /note/add`, `/note/update` and `/note/delete`. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { addNote, deleteNote, updateNote } from '../../../openapi/generated/engine-routes.js'
import { requireActor } from '../../../plugins/identity/plugin.js'
import { routeFrom } from '../../../lib/server/route.js'
import { NoteService } from './service.js'
import { engineDependencies } from '../dependencies.js'

async function noteRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new NoteService(engineDependencies(fastify))
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()
  // Every note route requires the user header: identity has resolved the actor.
  typed.route({
    ...routeFrom(addNote),
    handler: async (request) => service.add(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(updateNote),
    handler: async (request) => service.update(requireActor(request), request.body, request.headers.additionalheaders),
  })
  typed.route({
    ...routeFrom(deleteNote),
    handler: async (request) => service.delete(requireActor(request), request.body, request.headers.additionalheaders),
  })
}

export default fp(noteRoutes, {
  name: 'engine-note-routes',
  dependencies: ['process-models', 'process-instances', 'run-environments', 'sessions', 'identity', 'errors'],
})
