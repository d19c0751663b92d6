/**
 * Notes of a process instance (docs/reference/notes.md): kept newest first; adding one makes the author a
 * contributor, logs `noteAdded` and sends `Updated`; only the author may change or delete a note
 * (404 wm3091), a note that is not there is 404 wm3090. Every change is a compare-and-set commit.
 */
import type { NoteAddRequest, NoteDeleteRequest, NoteUpdateRequest, Session } from '../../../openapi/generated/schemas.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { SessionBuilder } from '../tasks/session.js'
import { taskForForm } from '../tasks/form-task.js'
import { newNote, withNote } from '../../../runtime/notes.js'
import type { ActivityEntry } from '../instances/service.js'
import { commitChange } from '../instances/loaded-instance-operations.js'
import type { Note, ProcessState } from '../../../runtime/types.js'
import {
  type AdditionalHeaders,
  type InstanceDependencies,
  type LoadedInstance,
  loadInstance,
  stateOf,
} from '../instances/loaded-instance.js'

export interface NoteServiceDependencies extends InstanceDependencies {
  sessions: SessionBuilder
}

interface NoteEdit {
  state: ProcessState
  activity: ActivityEntry
}

export class NoteService {
  constructor(private readonly deps: NoteServiceDependencies) {}

  async add(actor: Actor, body: NoteAddRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    return this.change(actor, body, additionalHeaders, ({ stored, env }) => {
      const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === body.taskId)
      if (!task) throw this.deps.fail('wm3005', { args: [body.taskId], parameters: { taskId: body.taskId, processInstanceId: stored._id } })
      const note = newNote(env.newId(), body.note, actor, env.now(), task.taskId)
      return {
        state: withNote(stateOf(stored), note),
        activity: { type: 'noteAdded', taskId: task.taskId, stepId: task.stepId, details: { noteId: note.id } },
      }
    })
  }

  async update(actor: Actor, body: NoteUpdateRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    return this.change(actor, body, additionalHeaders, ({ stored, env }) => {
      const note = this.ownNote(actor, stored.processInstance.notes, body.note.id, stored._id)
      const changed: Note = { ...note, note: body.note.note, updateDate: env.now().toISOString() }
      const notes = stored.processInstance.notes.map((candidate) => (candidate.id === note.id ? changed : candidate))
      return {
        state: { dataInstance: stored.dataInstance, processInstance: { ...stored.processInstance, notes } },
        activity: { type: 'noteUpdated', details: { noteId: note.id } },
      }
    })
  }

  async delete(actor: Actor, body: NoteDeleteRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    return this.change(actor, body, additionalHeaders, ({ stored }) => {
      const note = this.ownNote(actor, stored.processInstance.notes, body.noteId, stored._id)
      const notes = stored.processInstance.notes.filter((candidate) => candidate.id !== note.id)
      return {
        state: { dataInstance: stored.dataInstance, processInstance: { ...stored.processInstance, notes } },
        activity: { type: 'noteDeleted', details: { noteId: note.id } },
      }
    })
  }

  /** The note (404 wm3090), when the user wrote it (404 wm3091). */
  private ownNote(actor: Actor, notes: readonly Note[], noteId: string, processInstanceId: string): Note {
    const note = notes.find((candidate) => candidate.id === noteId)
    if (!note) throw this.deps.fail('wm3090', { args: [noteId], parameters: { noteId, processInstanceId } })
    if (note.userId !== actor.userId) throw this.deps.fail('wm3091', { args: [noteId], parameters: { noteId, processInstanceId } })
    return note
  }

  private async change(
    actor: Actor,
    body: { processInstanceId: string; processId?: string | undefined; appId?: string | undefined },
    additionalHeaders: AdditionalHeaders,
    edit: (loaded: LoadedInstance) => NoteEdit,
  ): Promise<Session> {
    const loaded = await loadInstance(this.deps, actor, { ...body, additionalHeaders, check: 'access' })
    const { state, activity } = edit(loaded)
    // Notes are kept on a suspended instance too: they change nothing the process runs on.
    const committed = await commitChange(this.deps, loaded, actor, {
      state,
      effects: [],
      event: 'Updated',
      activities: [activity],
      allowedWhileSuspended: true,
    })
    return this.deps.sessions.build({
      principal: actor,
      state: committed,
      compiled: loaded.compiled,
      task: taskForForm(committed.processInstance, actor),
      skipToForm: true,
    })
  }
}
