/**
 * A second way into a service's HTTP server: a Unix domain socket beside its TCP port
 * (ENGINE_SOCKET), so that a gateway on the same host reaches the engine without the TCP loopback
 * stack. Connections accepted on the socket are handed to the same `http.Server`, so they are
 * served, kept alive, timed out and closed like the port's.
 */
import { lstat, unlink } from 'node:fs/promises'
import type { Server as HttpServer } from 'node:http'
import { connect, createServer, type Server } from 'node:net'
import type { Closable } from './start.js'

export class SocketPathInUse extends Error {
  override readonly name = 'SocketPathInUse'
}

/** Whether a process accepts connections on the socket at `path`. */
function accepting(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const probe = connect(path)
    probe.once('connect', () => {
      probe.destroy()
      resolve(true)
    })
    probe.once('error', () => resolve(false))
  })
}

/**
 * A socket file that a process which ended without closing it left behind would make `listen` fail;
 * it is removed. A socket someone still accepts on, or any other kind of file, is left alone.
 */
async function removeStaleSocket(path: string): Promise<void> {
  const existing = await lstat(path).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (existing === undefined) return
  if (!existing.isSocket()) throw new SocketPathInUse(`${path} exists and is not a socket`)
  if (await accepting(path)) throw new SocketPathInUse(`another process listens on ${path}`)
  await unlink(path)
}

/**
 * Listens on `path` for `server`. Closing the result stops accepting there and removes the socket
 * file at once: the connections accepted belong to `server`, and its own close ends them (waiting
 * for them here would wait for the gateway's kept-alive connections to time out).
 */
export async function listenOnUnixSocket(server: HttpServer, path: string): Promise<Closable> {
  await removeStaleSocket(path)
  const door: Server = createServer((socket) => server.emit('connection', socket))
  await new Promise<void>((resolve, reject) => {
    door.once('error', reject)
    door.listen(path, () => {
      door.off('error', reject)
      resolve()
    })
  })
  return {
    close: async () => {
      door.close()
    },
  }
}
