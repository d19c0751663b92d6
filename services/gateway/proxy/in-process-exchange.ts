/**
 * The request and response objects a forwarded request is routed with in-process
 * (in-process-engine.ts): what Fastify's router reads and writes of Node's `IncomingMessage` and
 * `ServerResponse`, for a request whose body has arrived whole and an answer that is collected
 * whole. light-my-request, built for tests, simulates the whole of HTTP instead (a response that
 * serializes its headers for a socket that drops them, a payload decoded to a string, a URL parsed
 * again): measured on the all-in-one, about 100 µs of CPU per request against 10 µs for these
 * (docs/performance.md#the-in-process-hop-without-inject).
 */
import { EventEmitter } from 'node:events'
import { Readable } from 'node:stream'

export type HeaderValue = string | string[]
export type TextHeaders = Record<string, HeaderValue>

/**
 * What the engine's request hooks and logs read of a connection: the peer is this process. One per
 * request: Fastify keeps a route's onTimeout state on its request's socket (`_meta`).
 */
function inProcessSocket() {
  const socket = {
    remoteAddress: '127.0.0.1',
    remotePort: 0,
    localAddress: '127.0.0.1',
    localPort: 0,
    encrypted: false,
    destroyed: false,
    // No socket timeout ever fires here: a listener for one is never called.
    on: () => socket,
    removeListener: () => socket,
  }
  return socket
}

/**
 * The forwarded request: its body, if any, is read as one chunk. It has arrived whole, so it is
 * `complete` from the start, as an `IncomingMessage` is once the last byte of its body came in.
 */
export class InProcessRequest extends Readable {
  readonly httpVersion = '1.1'
  readonly httpVersionMajor = 1
  readonly httpVersionMinor = 1
  readonly socket = inProcessSocket()
  readonly complete = true
  readonly aborted = false

  constructor(
    readonly method: string,
    public url: string,
    readonly headers: TextHeaders,
    private readonly body: Buffer | undefined,
  ) {
    super()
  }

  override _read(): void {
    if (this.body !== undefined && this.body.length > 0) this.push(this.body)
    this.push(null)
  }
}

export interface CollectedAnswer {
  statusCode: number
  headers: TextHeaders
  body: Buffer
}

/** No body goes with these answers, whatever was written (RFC 9110, sections 9.3.2, 15.3.5, 15.4.5). */
function hasNoBody(method: string, statusCode: number): boolean {
  return method === 'HEAD' || statusCode === 204 || statusCode === 304 || (statusCode >= 100 && statusCode < 200)
}

/**
 * The answer, collected: `settle` is told once, with the answer when it ends, or with the error when
 * it is destroyed first. 'finish' and 'close' follow in a later tick, which is when Fastify runs the
 * route's onResponse hooks (metrics, the request log).
 */
export class InProcessResponse extends EventEmitter {
  statusCode = 200
  headersSent = false
  writableEnded = false
  writableFinished = false
  destroyed = false
  private readonly headers: TextHeaders = {}
  private readonly chunks: Buffer[] = []
  private settled = false

  constructor(
    private readonly method: string,
    private readonly settle: (error: Error | null, answer?: CollectedAnswer) => void,
  ) {
    super()
    // Fastify emits 'error' on a response it cannot route; unheard, EventEmitter would throw it.
    this.on('error', (error: Error) => this.finishWith(error))
  }

  setHeader(name: string, value: string | number | readonly string[]): this {
    this.headers[name.toLowerCase()] = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : [...value]
    return this
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.headers[name.toLowerCase()]
  }

  getHeaders(): TextHeaders {
    return { ...this.headers }
  }

  hasHeader(name: string): boolean {
    return name.toLowerCase() in this.headers
  }

  removeHeader(name: string): void {
    delete this.headers[name.toLowerCase()]
  }

  writeHead(statusCode: number, headers?: Record<string, string | number | readonly string[] | undefined>): this {
    this.statusCode = statusCode
    for (const name in headers) {
      const value = headers[name]
      if (value !== undefined) this.setHeader(name, value)
    }
    this.headersSent = true
    return this
  }

  write(chunk: string | Uint8Array, encoding?: BufferEncoding): boolean {
    this.headersSent = true
    this.chunks.push(
      typeof chunk === 'string' ? Buffer.from(chunk, encoding ?? 'utf8') : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.length),
    )
    return true
  }

  end(chunk?: string | Uint8Array | null | (() => void), encoding?: BufferEncoding | null): this {
    if (chunk !== undefined && chunk !== null && typeof chunk !== 'function') this.write(chunk, encoding ?? undefined)
    this.headersSent = true
    this.writableEnded = true
    const body = hasNoBody(this.method, this.statusCode)
      ? Buffer.alloc(0)
      : this.chunks.length === 1
        ? (this.chunks[0] as Buffer)
        : Buffer.concat(this.chunks)
    this.finishWith(null, { statusCode: this.statusCode, headers: this.headers, body })
    process.nextTick(() => {
      this.writableFinished = true
      this.emit('finish')
      this.emit('close')
    })
    return this
  }

  destroy(error?: Error): this {
    if (this.destroyed) return this
    this.destroyed = true
    this.finishWith(error ?? new Error('the engine ended its answer before completing it'))
    process.nextTick(() => this.emit('close'))
    return this
  }

  private finishWith(error: Error | null, answer?: CollectedAnswer): void {
    if (this.settled) return
    this.settled = true
    this.settle(error, answer)
  }
}
