/**
 * Closing a server ends the keep-alive connections that are idle at that moment
 * (`forceCloseConnections: 'idle'`); a connection still serving a request then stays open for
 * keepAliveTimeout after its answer, holding the shutdown up. While the server closes, connections
 * are therefore closed as soon as they fall idle.
 */
import type { FastifyInstance } from 'fastify'

const IDLE_CHECK_MS = 50

export function closeConnectionsAsTheyFallIdle(app: FastifyInstance): void {
  let timer: NodeJS.Timeout | undefined
  app.addHook('preClose', async () => {
    timer = setInterval(() => app.server.closeIdleConnections(), IDLE_CHECK_MS)
    timer.unref()
  })
  app.addHook('onClose', async () => clearInterval(timer))
}
