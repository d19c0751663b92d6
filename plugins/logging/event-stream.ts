/**
 * Server-Sent Events of a client's log lines: the gateway's `GET /cloud/serviceLog/:service` and
 * the engine's internal feed both serve them through LogStreams. Lines come from a LogFeed: this
 * process's ring of a service, or another process's feed (LOG_SOURCE_<FM|WFM>_URL) relayed.
 *
 * A stream ends when the client goes away, when its feed ends, or when the app closes; each end
 * removes its ring listener, its heartbeat timer and its upstream request.
 */
import type { FastifyReply, FastifyRequest } from 'fastify'
import { request as httpRequest } from 'undici'
import { clientLine } from './client-lines.js'
import type { LogRing } from './ring.js'

export interface LogFeed {
  /** Calls `onLine` with the client's lines (recent ones first, then new ones) and `onEnd` once the feed ends. */
  start(onLine: (line: string) => void, onEnd: () => void): void
  /** Stops the feed; calls no callback after it. */
  stop(): void
}

/** The lines of a service of this process. */
export function ringFeed(ring: LogRing, clientId: string): LogFeed {
  let unsubscribe: (() => void) | undefined
  return {
    start(onLine) {
      let replayedUpTo = 0
      // Subscribed before the replay, so that no line falls between the two; seen ones are skipped.
      unsubscribe = ring.subscribe((line) => {
        if (line.sequence <= replayedUpTo) return
        const text = clientLine(clientId, line.text)
        if (text !== undefined) onLine(text)
      })
      for (const line of ring.recent()) {
        replayedUpTo = line.sequence
        const text = clientLine(clientId, line.text)
        if (text !== undefined) onLine(text)
      }
    },
    stop() {
      unsubscribe?.()
      unsubscribe = undefined
    },
  }
}

export class LogSourceError extends Error {
  constructor(
    readonly url: string,
    problem: string,
  ) {
    super(`${url}: ${problem}`)
    this.name = 'LogSourceError'
  }
}

/** The data lines of an event stream chunk by chunk, whatever the chunk boundaries. */
function eventDataParser(onData: (data: string) => void): (chunk: string) => void {
  let pending = ''
  return (chunk) => {
    pending += chunk
    const lines = pending.split(/\r?\n/)
    pending = lines.pop() ?? ''
    for (const line of lines) if (line.startsWith('data:')) onData(line.slice(line.startsWith('data: ') ? 6 : 5))
  }
}

/**
 * Another process's feed of a service's lines, relayed: connects (and fails with LogSourceError
 * when the source cannot be reached or refuses) before the client's stream is opened.
 */
export async function remoteFeed(url: string, clientId: string, headers: Record<string, string>): Promise<LogFeed> {
  const abort = new AbortController()
  let response: Awaited<ReturnType<typeof httpRequest>>
  try {
    response = await httpRequest(url, {
      method: 'GET',
      headers: { ...headers, accept: 'text/event-stream', lplogclientid: clientId },
      signal: abort.signal,
      headersTimeout: 10_000,
      bodyTimeout: 0,
    })
  } catch (error) {
    throw new LogSourceError(url, (error as Error).message)
  }
  if (response.statusCode !== 200) {
    const answer = (await response.body.text().catch(() => '')).slice(0, 500)
    throw new LogSourceError(url, `answered ${response.statusCode} ${answer}`.trim())
  }
  let stopped = false
  return {
    start(onLine, onEnd) {
      const parse = eventDataParser((data) => {
        const text = clientLine(clientId, data)
        if (text !== undefined && !stopped) onLine(text)
      })
      response.body.setEncoding('utf8')
      response.body.on('data', parse)
      const ended = (): void => {
        if (!stopped) onEnd()
      }
      response.body.once('end', ended)
      response.body.once('error', ended)
    },
    stop() {
      stopped = true
      abort.abort()
      response.body.destroy()
    },
  }
}

export const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' } as const
/** A whitespace-only line: ignored by every SSE client, it keeps proxies from closing an idle stream. */
export const HEARTBEAT = ' \n\n'
/** Past this much unsent output a slow client misses lines rather than growing the buffer. */
const MAX_BUFFERED_BYTES = 1024 * 1024

/** The open event streams of one route, so that closing the app ends them. */
export class LogStreams {
  private readonly closers = new Set<() => void>()

  get size(): number {
    return this.closers.size
  }

  /** Takes the reply over and streams the feed's lines as `data:` events until either side ends. */
  serve(request: FastifyRequest, reply: FastifyReply, feed: LogFeed, heartbeatMs: number): void {
    reply.hijack()
    const raw = reply.raw
    // What hooks set before the take-over (x-request-id, traceparent) goes out with the SSE headers.
    const hookHeaders = Object.entries(reply.getHeaders()).filter(
      (entry): entry is [string, string | number | string[]] => entry[1] !== undefined,
    )
    raw.writeHead(200, { ...Object.fromEntries(hookHeaders), ...SSE_HEADERS })
    raw.flushHeaders()
    let dropped = 0
    const heartbeat = setInterval(() => raw.write(HEARTBEAT), heartbeatMs)
    heartbeat.unref()
    const close = (): void => {
      if (!this.closers.delete(close)) return
      clearInterval(heartbeat)
      feed.stop()
      if (dropped > 0) request.log.warn({ dropped }, 'log stream client too slow, lines dropped')
      if (!raw.writableEnded) raw.end()
    }
    this.closers.add(close)
    raw.once('close', close)
    feed.start((line) => {
      if (raw.writableLength > MAX_BUFFERED_BYTES) {
        dropped++
        return
      }
      raw.write(`data: ${line}\n\n`)
    }, close)
  }

  /** Ends every open stream (the app is closing). */
  closeAll(): void {
    for (const close of [...this.closers]) close()
  }
}
