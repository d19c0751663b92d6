/**
 * The all-in-one's gateway thread: builds and serves the gateway exactly as `start` does, on the
 * main thread's store through a remote store (or its own MongoDB connection), with its log lines
 * relayed to the main thread's stdout. It closes when the main thread asks.
 */
import { parentPort, workerData } from 'node:worker_threads'
import { RelayDestination } from '../../plugins/logging/relay.js'
import { LogRing } from '../../plugins/logging/ring.js'
import { openStore } from '../../store/open.js'
import { RemoteStore } from '../../store/remote/client.js'
import { LOG_SERVICE, serve, serviceLogger } from '../main.js'
import type { FromGateway, GatewayWorkerData, ToGateway } from './messages.js'

if (!parentPort) throw new Error('the gateway thread runs as a worker of the all-in-one')
const mainThread = parentPort
const post = (message: FromGateway): void => mainThread.postMessage(message)

const { config, store: remote } = workerData as GatewayWorkerData
const relay = new RelayDestination((lines) => post({ type: 'log', lines }))
const ring = new LogRing()
const logger = serviceLogger('gateway', config.logLevel, ring, relay)
const store = remote
  ? new RemoteStore(remote.port, remote.kind)
  : await openStore({ mongodbUri: config.mongodbUri, mongodbMaxTimeMs: config.mongodbMaxTimeMs, dataDir: config.dataDir, logger })
const { app } = await serve('gateway', { config, store, logger, logRings: { [LOG_SERVICE.gateway]: ring } })
post({ type: 'listening' })

mainThread.on('message', (message: ToGateway) => {
  if (message.type !== 'close') return
  void (async () => {
    await app.close()
    await store.close()
    relay.flush()
    post({ type: 'closed' })
  })()
})
