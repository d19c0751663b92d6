/** `POST /note/add`, `/note/update` and `/note/delete`. */
import { addNote, deleteNote, updateNote } from '../../../openapi/generated/engine-routes.js'
import { NoteService } from './service.js'
import { commandRoutesPlugin, routeCommand } from '../instances/command-routes.js'

export default commandRoutesPlugin(
  'engine-note-routes',
  (dependencies) => new NoteService(dependencies),
  (fastify, service) => {
    routeCommand(fastify, addNote, service.add.bind(service))
    routeCommand(fastify, updateNote, service.update.bind(service))
    routeCommand(fastify, deleteNote, service.delete.bind(service))
  },
)
