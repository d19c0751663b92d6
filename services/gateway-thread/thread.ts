/**
 * The main thread's handle on the all-in-one's gateway thread: starts it on this thread's store
 * (served over a MessagePort) or on MongoDB, writes its relayed log lines to this thread's stdout,
 * closes it on shutdown and reports it when it stops without being asked.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads'
import type { DestinationStream } from 'pino'
import type { Config } from '../../lib/config/config.js'
import type { Closable } from '../../lib/server/start.js'
import type { Store } from '../../store/port.js'
import { type StoreHost, serveStore } from '../../store/remote/host.js'
import type { FromGateway, GatewayWorkerData, ToGateway } from './messages.js'

export interface GatewayThreadOptions {
  config: Config
  /** This thread's store; with MongoDB the gateway thread opens its own connection instead. */
  store: Store
  stdout: DestinationStream
  /** The worker's module; tests give one that misbehaves. */
  workerUrl?: URL
}

export interface GatewayThread extends Closable {
  /** Called once when the thread stops without having been asked to close (an uncaught error). */
  onUnexpectedExit(listener: (reason: Error) => void): void
}

const GATEWAY_WORKER = new URL('./worker.js', import.meta.url)

/** Resolves once the gateway listens; rejects with the thread's error when it cannot start. */
export function startGatewayThread(options: GatewayThreadOptions): Promise<GatewayThread> {
  let host: StoreHost | undefined
  const workerData: GatewayWorkerData = { config: options.config, store: undefined }
  const transferList: MessagePort[] = []
  if (!options.config.mongodbUri) {
    const channel = new MessageChannel()
    host = serveStore(options.store, channel.port1)
    workerData.store = { port: channel.port2, kind: options.store.kind }
    transferList.push(channel.port2)
  }
  const worker = new Worker(options.workerUrl ?? GATEWAY_WORKER, { workerData, transferList })

  let lastError: Error | undefined
  let closing = false
  let hasExited = false
  let unexpectedExit: ((reason: Error) => void) | undefined
  let onListening: (() => void) | undefined
  let onClosed: (() => void) | undefined
  const exited = new Promise<number>((resolve) => worker.once('exit', resolve))
  void exited.then(() => (hasExited = true))

  worker.on('message', (message: FromGateway) => {
    if (message.type === 'log') options.stdout.write(message.lines)
    else if (message.type === 'listening') onListening?.()
    else onClosed?.()
  })
  worker.on('error', (error) => (lastError = error))
  // Only once the thread is gone: until then it may still call the store.
  const hostClosed = exited.then(() => host?.close())
  void exited.then((code) => {
    if (!closing) unexpectedExit?.(lastError ?? new Error(`the gateway thread exited with code ${code}`))
  })

  const thread: GatewayThread = {
    onUnexpectedExit(listener) {
      unexpectedExit = listener
    },
    async close() {
      if (closing) return
      closing = true
      // A thread that died was reported already; what is left to close is the host.
      if (hasExited) return void (await hostClosed)
      const closed = new Promise<void>((resolve) => (onClosed = resolve))
      worker.postMessage({ type: 'close' } satisfies ToGateway)
      const finished = await Promise.race([closed.then(() => true), exited.then(() => false)])
      if (!finished) throw lastError ?? new Error('the gateway thread exited before it closed')
      // Its server, store connection and log lines are done; what else it holds ends with it.
      await worker.terminate()
      await hostClosed
    },
  }
  return new Promise((resolve, reject) => {
    onListening = () => resolve(thread)
    void exited.then((code) => reject(lastError ?? new Error(`the gateway thread exited with code ${code} before listening`)))
  })
}
