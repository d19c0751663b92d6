/**
 * How big a process instance may grow (docs/security.md "Size limits"): one note's text, the number
 * of notes, and the whole stored state (processInstance + dataInstance as JSON). Without them one
 * user could fill an instance with notes until every read of it (`/context`) answers megabytes and
 * the store refuses the document. Checked on every commit, so no route can store past them; an
 * instance that is already over a limit (stored before it) can still shrink: only growth is refused.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ProcessState } from '../../../runtime/types.js'

export interface InstanceLimits {
  /** NOTE_MAX_BYTES: the UTF-8 size of one note's text. */
  noteMaxBytes: number
  /** NOTES_MAX_PER_INSTANCE: notes one instance may keep. */
  notesMaxPerInstance: number
  /** INSTANCE_MAX_BYTES: processInstance + dataInstance as stored JSON. */
  instanceMaxBytes: number
}

export interface LimitBreach {
  code: Extract<EngineErrorCode, 'wm3092' | 'wm3093' | 'wm3045'>
  args: string[]
  parameters: Record<string, string>
}

function stateBytes(state: ProcessState): number {
  return Buffer.byteLength(JSON.stringify({ processInstance: state.processInstance, dataInstance: state.dataInstance }), 'utf8')
}

/** The first limit `next` breaks that `previous` (absent for a new instance) did not already break, or null. */
export function limitBreach(limits: InstanceLimits, previous: ProcessState | undefined, next: ProcessState): LimitBreach | null {
  const processInstanceId = next.processInstance.processInstanceId
  const before = new Map((previous?.processInstance.notes ?? []).map((note) => [note.id, note.note]))
  for (const note of next.processInstance.notes) {
    if (before.get(note.id) === note.note) continue
    const bytes = Buffer.byteLength(note.note, 'utf8')
    if (bytes > limits.noteMaxBytes) {
      return { code: 'wm3092', args: [String(bytes), String(limits.noteMaxBytes)], parameters: { processInstanceId, noteId: note.id } }
    }
  }
  const notes = next.processInstance.notes.length
  if (notes > limits.notesMaxPerInstance && notes > before.size) {
    return { code: 'wm3093', args: [processInstanceId, String(limits.notesMaxPerInstance)], parameters: { processInstanceId } }
  }
  const bytes = stateBytes(next)
  if (bytes > limits.instanceMaxBytes && (previous === undefined || bytes > stateBytes(previous))) {
    return { code: 'wm3045', args: [processInstanceId, String(bytes), String(limits.instanceMaxBytes)], parameters: { processInstanceId } }
  }
  return null
}
