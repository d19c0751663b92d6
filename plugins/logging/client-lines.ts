/**
 * What the log stream sends a client: only the lines that carry its `[CI: <clientId>]` marker, with
 * the platform's timestamps taken out (pino's `time`, or a timestamp a hosting platform put in
 * front of the line). Applying it twice changes nothing, so a relayed line can pass through again.
 */
import { clientMarker } from './logger.js'

/** `2025-06-30T08:00:00.123Z ` or `2025-06-30 08:00:00,123 ` at the start of a platform's line. */
const LEADING_TIMESTAMP = /^\[?\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?\]?\s+/

function withoutTimestamp(text: string): string {
  if (text.startsWith('{')) {
    try {
      const entry = JSON.parse(text) as unknown
      if (typeof entry === 'object' && entry !== null && !Array.isArray(entry)) {
        if (!('time' in entry)) return text
        const { time: _time, ...rest } = entry as Record<string, unknown>
        return JSON.stringify(rest)
      }
    } catch {
      // Not JSON after all (e.g. cut at the ring's line limit): treated as text.
    }
  }
  return text.replace(LEADING_TIMESTAMP, '')
}

/** The line as the client gets it, or undefined when it is not the client's. */
export function clientLine(clientId: string, text: string): string | undefined {
  if (!text.includes(clientMarker(clientId))) return undefined
  return withoutTimestamp(text)
}
