/**
 * File bytes across threads: a Readable on one side of a MessageChannel, a Readable on the other.
 * The receiver asks for each chunk (`pull`), so a slow consumer holds the producer back instead of
 * queueing a whole file in messages. Either side closing the channel ends the stream on the other.
 */
import { Readable } from 'node:stream'
import type { MessagePort } from 'node:worker_threads'
import { deserializeError, type SerializedError, serializeError } from './protocol.js'

type ToReceiver = { type: 'chunk'; chunk: Uint8Array } | { type: 'end' } | { type: 'error'; error: SerializedError }

/** Answers each pull from the port with the next chunk of `source`; the receiver closes the port. */
export function sendStream(source: Readable, port: MessagePort): void {
  const chunks = source[Symbol.asyncIterator]() as AsyncIterator<Buffer | string>
  let finished = false
  const post = (message: ToReceiver, transfer: ArrayBuffer[] = []): void => {
    if (!finished) port.postMessage(message, transfer)
  }
  port.on('message', () => {
    chunks.next().then(
      ({ value, done }) => {
        if (done) return post({ type: 'end' })
        // A copy of exactly the chunk's bytes, moved rather than cloned: a chunk may be a view into
        // a larger pooled buffer, which a clone would copy whole.
        const chunk = new Uint8Array(typeof value === 'string' ? Buffer.from(value) : value)
        post({ type: 'chunk', chunk }, [chunk.buffer])
      },
      (error: unknown) => post({ type: 'error', error: serializeError(error) }),
    )
  })
  port.once('close', () => {
    finished = true
    // The receiver went away (or is done): nothing more is read from the source.
    source.destroy()
  })
}

/** The bytes another thread sends with sendStream, as a Readable. */
export function receiveStream(port: MessagePort): Readable {
  let settled = false
  const readable = new Readable({
    read() {
      port.postMessage('pull')
    },
    destroy(error, callback) {
      port.close()
      callback(error)
    },
  })
  port.on('message', (message: ToReceiver) => {
    if (message.type === 'chunk') {
      readable.push(Buffer.from(message.chunk.buffer, message.chunk.byteOffset, message.chunk.byteLength))
      return
    }
    settled = true
    port.close()
    if (message.type === 'end') readable.push(null)
    else readable.destroy(deserializeError(message.error))
  })
  port.once('close', () => {
    if (!settled) readable.destroy(new Error('The thread sending the stream closed it before its end'))
  })
  return readable
}
