/**
 * Adding a note to a process instance's state (notes are kept newest first; their author joins
 * `contributorUsers`, docs/reference/instances.md#contributors). `/action/complete` adds one for `additionalInfo.activityDescription`.
 */
import type { Note, ProcessState } from './types.js'

export interface NoteAuthor {
  userId: string
  fullName: string
}

export function newNote(id: string, text: string, author: NoteAuthor, now: Date, taskId?: string): Note & { taskId?: string } {
  const at = now.toISOString()
  return { id, note: text, userId: author.userId, userName: author.fullName, createdAt: at, updateDate: at, ...(taskId ? { taskId } : {}) }
}

export function withNote(state: ProcessState, note: Note): ProcessState {
  const instance = state.processInstance
  const contributorUsers = instance.contributorUsers.includes(note.userId)
    ? instance.contributorUsers
    : [...instance.contributorUsers, note.userId]
  return { dataInstance: state.dataInstance, processInstance: { ...instance, notes: [note, ...instance.notes], contributorUsers } }
}
