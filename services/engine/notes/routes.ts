/** `POST /note/add`, `/note/update` and `/note/delete`. */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { addNote, deleteNote, updateNote } from '../../../openapi/generated/engine-routes.js'
import { NoteService } from './service.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'
import { routeCommand } from '../instances/command-routes.js'

async function noteRoutes(fastify: FastifyInstance): Promise<void> {
  const service = new NoteService(engineDependencies(fastify))
  routeCommand(fastify, addNote, service.add.bind(service))
  routeCommand(fastify, updateNote, service.update.bind(service))
  routeCommand(fastify, deleteNote, service.delete.bind(service))
}

export default fp(noteRoutes, {
  name: 'engine-note-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'identity'],
})
