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

/**
 * The most bytes a string's JSON can take: a UTF-16 code unit becomes at most 6 (a control
 * character's `\u00XX` escape), plus the quotes.
 */
function stringBytesAtMost(text: string): number {
  return 6 * text.length + 2
}

/**
 * An upper bound of `value`'s JSON size in UTF-8, from the lengths of its strings without reading
 * them: a walk that costs a fraction of encoding the state, which every commit would otherwise do
 * to learn that a state of a few kilobytes is far under a limit of megabytes. Stops once past `budget`.
 */
function jsonBytesAtMost(value: unknown, budget: number): number {
  switch (typeof value) {
    case 'string':
      return stringBytesAtMost(value)
    case 'object':
      break
    default:
      // A number's JSON is at most 24 characters (`-1.2345678901234567e-308`); true, false and null fewer.
      return 24
  }
  if (value === null) return 4
  // A value with its own JSON (a Date) is not measured by its fields: only encoding can tell.
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return Number.POSITIVE_INFINITY
  let bytes = 2
  if (Array.isArray(value)) {
    for (const item of value as unknown[]) {
      bytes += jsonBytesAtMost(item, budget - bytes) + 1
      if (bytes > budget) return bytes
    }
    return bytes
  }
  const fields = value as Record<string, unknown>
  for (const key in fields) {
    bytes += stringBytesAtMost(key) + 1 + jsonBytesAtMost(fields[key], budget - bytes) + 1
    if (bytes > budget) return bytes
  }
  return bytes
}

/** Whether the state's JSON is surely within `maxBytes`, with no encoding; false when only encoding can tell. */
function surelyWithin(state: ProcessState, maxBytes: number): boolean {
  const budget = maxBytes - 40
  const processInstance = jsonBytesAtMost(state.processInstance, budget)
  return processInstance + jsonBytesAtMost(state.dataInstance, budget - processInstance) <= budget
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
  if (surelyWithin(next, limits.instanceMaxBytes)) return null
  const bytes = stateBytes(next)
  if (bytes > limits.instanceMaxBytes && (previous === undefined || bytes > stateBytes(previous))) {
    return { code: 'wm3045', args: [processInstanceId, String(bytes), String(limits.instanceMaxBytes)], parameters: { processInstanceId } }
  }
  return null
}
