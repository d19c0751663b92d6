// @ts-check
/** Shared by the benchmarks that start services of their own. */
import { createServer } from 'node:net'

/** @returns {Promise<number>} a free localhost port */
export async function freePort() {
  return new Promise((resolvePort, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = /** @type {import('node:net').AddressInfo} */ (server.address())
      server.close(() => resolvePort(port))
    })
  })
}
