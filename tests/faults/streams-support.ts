/**
 * Support for the streams fault tests: a client that sends a multipart upload (or any body) as a
 * real client does — the bytes in chunks, with or without a declared length — and records whatever
 * comes back first: the answer, or the connection error that took its place.
 */
import { request as httpRequest } from 'node:http'

export interface RawAnswer {
  status?: number
  body?: Record<string, unknown>
  /** The socket error that ended the request before an answer was read (EPIPE, ECONNRESET). */
  error?: string
  ms: number
}

export interface RawBodyOptions {
  url: string
  headers: Record<string, string>
  /** Bytes before the filler (multipart headers and the fields part). */
  head: Buffer
  /** How many filler bytes follow the head. */
  fillerBytes: number
  tail?: Buffer
  /** false: sent chunked, without a content-length. */
  declareLength?: boolean
  /** Destroys the request once this many filler bytes are sent: a client that goes away mid-upload. */
  abandonAfter?: number
  /** A pause after each 64 KiB chunk: a slow client, whose body is still arriving when something happens. */
  chunkDelayMs?: number
  timeoutMs?: number
}

const CHUNK = Buffer.alloc(64 * 1024, 0x61)

/** Sends head + filler + tail; resolves with the answer (or the error in its place), or once abandoned. */
export function sendRawBody(options: RawBodyOptions): Promise<RawAnswer> {
  const { url, head, fillerBytes, tail = Buffer.alloc(0), declareLength = true, abandonAfter, chunkDelayMs, timeoutMs = 20_000 } = options
  const target = new URL(url)
  const started = Date.now()
  return new Promise((resolve) => {
    let settled = false
    const settle = (answer: Omit<RawAnswer, 'ms'>) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve({ ...answer, ms: Date.now() - started })
    }
    const headers: Record<string, string | number> = { ...options.headers }
    if (declareLength) headers['content-length'] = head.length + fillerBytes + tail.length
    // A connection of its own (no agent): what one client's request does to its connection is the point.
    const req = httpRequest(
      { host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers, agent: false },
      (res) => {
        const chunks: Buffer[] = []
        res.on('data', (chunk: Buffer) => chunks.push(chunk))
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8')
          let body: Record<string, unknown> | undefined
          try {
            body = JSON.parse(text) as Record<string, unknown>
          } catch {
            body = { unparsed: text }
          }
          settle({ status: res.statusCode ?? 0, body })
        })
        res.on('error', (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
      },
    )
    // An error after the answer arrived (the server closed while we were still sending) changes nothing.
    req.on('error', (error: NodeJS.ErrnoException) => settle({ error: error.code ?? error.message }))
    const timer = setTimeout(() => {
      req.destroy()
      settle({ error: `no answer within ${timeoutMs} ms` })
    }, timeoutMs)
    req.write(head)
    let sent = 0
    const pump = (): void => {
      while (sent < fillerBytes) {
        if (settled) return
        if (abandonAfter !== undefined && sent >= abandonAfter) {
          req.destroy()
          settle({ error: 'abandoned' })
          return
        }
        const size = Math.min(CHUNK.length, fillerBytes - sent)
        sent += size
        const flowing = req.write(CHUNK.subarray(0, size))
        if (chunkDelayMs !== undefined) {
          setTimeout(pump, chunkDelayMs)
          return
        }
        if (!flowing) {
          req.once('drain', pump)
          return
        }
      }
      req.end(tail)
    }
    pump()
  })
}

export const BOUNDARY = 'streams-fault-boundary'

/**
 * The multipart head of an upload: the `fields` part (as given), any extra small `fileBody` parts, and the start of the `fileBody` part
 * the filler goes into.
 */
export function uploadHead(fieldsText: string, fileBodyParts = 1): Buffer {
  const fields = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="fields"\r\n\r\n${fieldsText}\r\n`
  const extraFiles = Array.from(
    { length: fileBodyParts - 1 },
    (_, index) =>
      `--${BOUNDARY}\r\nContent-Disposition: form-data; name="fileBody"; filename="extra-${index}.pdf"\r\nContent-Type: ` +
        `application/pdf\r\n\r\nextra bytes\r\n`,
  ).join('')
  const file = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="fileBody"; filename="note.pdf"\r\nContent-Type: ` +
    `application/pdf\r\n\r\n`
  return Buffer.from(fields + extraFiles + file, 'utf8')
}

/** Closes the last file part and the multipart body. */
export const UPLOAD_TAIL = Buffer.from(`\r\n--${BOUNDARY}--\r\n`)

export const MULTIPART = `multipart/form-data; boundary=${BOUNDARY}`
