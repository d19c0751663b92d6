/** What the all-in-one's main thread and its gateway thread tell each other (beside the store's own channel). */
import type { MessagePort } from 'node:worker_threads'
import type { Config } from '../../lib/config/config.js'
import type { Store } from '../../store/port.js'

export interface GatewayWorkerData {
  config: Config
  /** The remote store's port to the main thread's store; absent with MongoDB, which the thread opens itself. */
  store: { port: MessagePort; kind: Store['kind'] } | undefined
}

export type FromGateway =
  /** Log lines for the main thread to write to stdout. */
  | { type: 'log'; lines: string }
  | { type: 'listening' }
  /** The gateway closed (its requests finished, its store connection ended) and its last lines were sent. */
  | { type: 'closed' }

export type ToGateway = { type: 'close' }
