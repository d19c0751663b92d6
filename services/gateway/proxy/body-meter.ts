/**
 * A proxied request body on its way to the engine: read whole when its declared length is small,
 * else streamed as it arrives, counted against the route's limit. A declared `content-length` over
 * the limit is refused before anything is sent; a chunked body that grows past it is cut, which
 * aborts the engine request (the engine keeps nothing of an upload it did not receive whole), and
 * the proxy answers 413 itself.
 *
 * The engine reads a stream placed between the client's request and itself, never the request: when
 * the engine request ends early, undici destroys the stream it was reading, and destroying the
 * client's request would reset the client's connection before it reads the answer.
 */
import type { IncomingMessage } from 'node:http'
import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyRequest } from 'fastify'

export class BodyTooLarge extends Error {
  override readonly name = 'BodyTooLarge'
  constructor(limit: number) {
    super(`the request body is larger than ${limit} bytes`)
  }
}

/** The client went away before its body was complete. */
export class BodyAbandoned extends Error {
  override readonly name = 'BodyAbandoned'
  constructor() {
    super('the client closed the connection before its body was complete')
  }
}

class BodyMeter extends Transform {
  private received = 0
  overflowed = false

  constructor(private readonly limit: number) {
    super()
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.received += chunk.length
    if (this.received > this.limit) {
      this.overflowed = true
      callback(new BodyTooLarge(this.limit))
      return
    }
    callback(null, chunk)
  }
}

/**
 * A declared length up to this is read whole before the engine is sent anything: the engine then
 * gets the headers and the body in one write, and neither side sets up a stream for a few hundred
 * bytes of JSON (nearly every request). Larger and chunked bodies are streamed.
 */
export const WHOLE_BODY_MAX_BYTES = 64 * 1024

/** The whole body of the length the client declared, or BodyAbandoned when the client leaves first. */
function wholeBody(payload: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    payload.on('data', (chunk: Buffer) => chunks.push(chunk))
    payload.once('end', () => resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)))
    payload.once('error', reject)
    payload.once('close', () => {
      if (!payload.complete) reject(new BodyAbandoned())
    })
  })
}

/** The body the engine is sent (read whole or streamed), or the 413 error of a declared length over the route's limit. */
export function meteredBody(request: FastifyRequest, payload: IncomingMessage): BodyMeter | Promise<Buffer> | BodyTooLarge {
  const limit = request.routeOptions.bodyLimit ?? Number.POSITIVE_INFINITY
  const declared = Number(request.headers['content-length'])
  if (declared > limit) return new BodyTooLarge(limit)
  // Node's parser delivers exactly the declared length, so a whole body stays within the limit.
  if (declared <= WHOLE_BODY_MAX_BYTES && request.headers['transfer-encoding'] === undefined) return wholeBody(payload)
  const meter = new BodyMeter(limit)
  payload.pipe(meter)
  payload.once('close', () => {
    if (!payload.complete) meter.destroy(new BodyAbandoned())
  })
  // The engine stopped reading (its request failed or ended early): the rest of the client's body
  // must not stall the client's connection; it is discarded (and limited) after the answer.
  meter.once('close', () => {
    payload.unpipe(meter)
    if (!payload.complete) payload.resume()
  })
  return meter
}

/** Whether the request's body was cut for going over the route's limit. */
export function overflowed(request: { body: unknown }): boolean {
  return request.body instanceof BodyMeter && request.body.overflowed
}
