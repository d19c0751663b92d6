/**
 * An answer sent before its request body was read — a refused upload, a 413 — must still reach the
 * client, and the connection must not stay half-read.
 *
 * Closing the socket at once (Node does so for an answer with `connection: close`) while the client
 * is still sending makes the kernel reset the connection, and a reset can throw away the answer
 * before the client reads it (the client sees EPIPE or ECONNRESET instead of the error). Leaving the
 * rest unread stalls the connection: the client's writes block and a keep-alive peer (the gateway's
 * pool) waits on it until a timeout. So, as nginx's lingering close does: the rest of the body is
 * read and discarded, up to a limit of bytes and time. A body that ends within it leaves the
 * connection clean and reusable; beyond it the answer is long flushed, the socket is half-closed
 * (FIN), still read for a moment, and then closed.
 */
import type { IncomingMessage } from 'node:http'
import type { FastifyInstance, FastifyRequest } from 'fastify'

export interface UnreadBodyOptions {
  /** How much of a body left unread is read and discarded after the answer before the connection is closed. */
  discardBytes(request: FastifyRequest): number
  /** How long the rest may take to arrive before the connection is closed. */
  lingerMs?: number
}

const DEFAULT_LINGER_MS = 10_000
/** After the FIN: time for the client to read the answer before the socket goes. */
const CLOSE_GRACE_MS = 2_000

/** Reads and discards what is left of `raw`'s body; closes the connection once more than `maxBytes` or `lingerMs` is needed. */
export function discardRestOfBody(raw: IncomingMessage, maxBytes: number, lingerMs = DEFAULT_LINGER_MS): void {
  if (raw.complete || raw.readableEnded || raw.destroyed) return
  const socket = raw.socket
  let discarded = 0
  const done = (): void => {
    clearTimeout(deadline)
    raw.removeListener('data', count)
    raw.removeListener('end', done)
    raw.removeListener('close', done)
  }
  const close = (): void => {
    done()
    // Whatever else arrives is still read (and dropped), so that the FIN is not followed by a reset.
    raw.resume()
    socket.end()
    setTimeout(() => socket.destroy(), CLOSE_GRACE_MS).unref()
  }
  const count = (chunk: Buffer): void => {
    discarded += chunk.length
    if (discarded > maxBytes) close()
  }
  const deadline = setTimeout(close, lingerMs)
  deadline.unref()
  raw.on('data', count)
  raw.once('end', done)
  raw.once('close', done)
  raw.resume()
}

/**
 * Applies {@link discardRestOfBody} to every answer of `app` sent before its request body was read.
 * Such an answer is kept from asking for `connection: close` (Fastify does for a declared length
 * over the limit, reply-from for an engine answer that came early): the discard decides when the
 * connection ends.
 */
export function discardUnreadBodies(app: FastifyInstance, options: UnreadBodyOptions): void {
  // Callback hooks, not async ones: they run on every answer of both services and have nothing to
  // wait for, so no promise needs to be made and awaited for each.
  app.addHook('onSend', (request, reply, payload, done) => {
    if (!request.raw.complete && reply.getHeader('connection') === 'close') reply.removeHeader('connection')
    done(null, payload)
  })
  app.addHook('onResponse', (request, _reply, done) => {
    if (!request.raw.complete && !request.raw.readableEnded) discardRestOfBody(request.raw, options.discardBytes(request), options.lingerMs)
    done()
  })
}
