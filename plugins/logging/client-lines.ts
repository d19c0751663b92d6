/**
 * What the log stream sends a client: only the lines that carry its `[CI: <clientId>]` marker, with
 * the platform's timestamps taken out. The marker counts only where the request logger puts it — at
 * the start of the message (pino's `msg`, or a plain line after its timestamp) — so a logged value
 * (a URL, a header) that contains `[CI: other]` does not send the line to client `other` (pino's `time`, or a timestamp a hosting
 * platform put in
 * front of the line). Applying it twice changes nothing, so a relayed line can pass through again.
 */
import { clientMarker } from './logger.js'

/** `2025-06-30T08:00:00.123Z ` or `2025-06-30 08:00:00,123 ` at the start of a platform's line. */
const LEADING_TIMESTAMP = /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+/

function jsonEntry(text: string): Record<string, unknown> | undefined {
  if (!text.startsWith('{')) return undefined
  try {
    const entry = JSON.parse(text) as unknown
    return typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? (entry as Record<string, unknown>) : undefined
  } catch {
    // Not JSON after all (e.g. cut at the ring's line limit): treated as text.
    return undefined
  }
}

/** The line as the client gets it, or undefined when it is not the client's. */
export function clientLine(clientId: string, text: string): string | undefined {
  const marker = clientMarker(clientId)
  // Cheap test first: most lines are some other client's, or nobody's.
  if (!text.includes(marker)) return undefined
  const entry = jsonEntry(text)
  if (entry !== undefined) {
    if (typeof entry.msg !== 'string' || !entry.msg.startsWith(`${marker} `)) return undefined
    if (!('time' in entry)) return text
    const { time: _time, ...rest } = entry
    return JSON.stringify(rest)
  }
  const line = text.replace(LEADING_TIMESTAMP, '')
  return line.startsWith(marker) ? line : undefined
}
