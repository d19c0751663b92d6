/** A test client of a Server-Sent Events endpoint (the log streams): collects what arrives until closed. */
import { waitUntil } from './wait.js'

export interface OpenEventStream {
  response: Response
  /** The raw text received so far. */
  received(): string
  /** The `data:` payloads received so far. */
  events(): string[]
  waitFor(check: (stream: OpenEventStream) => boolean, limitMs?: number): Promise<void>
  close(): void
}

export async function openEventStream(url: string, headers: Record<string, string>): Promise<OpenEventStream> {
  const abort = new AbortController()
  const response = await fetch(url, { headers, signal: abort.signal })
  let text = ''
  const reading = (async () => {
    const decoder = new TextDecoder()
    const reader = response.body!.getReader()
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      text += decoder.decode(value, { stream: true })
    }
  })().catch(() => undefined)
  const stream: OpenEventStream = {
    response,
    received: () => text,
    events: () =>
      text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6)),
    async waitFor(check, limitMs = 3000) {
      const met = await waitUntil(
        () => check(stream),
        (holds) => holds,
        limitMs,
        10,
      )
      if (!met) throw new Error(`stream condition not met within ${limitMs} ms; received: ${text.slice(0, 2000)}`)
    },
    close() {
      abort.abort()
      void reading
    },
  }
  return stream
}
