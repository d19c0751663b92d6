/**
 * The sandbox process: a child of the engine that holds the flow-function worker threads (piscina).
 * V8 ends the whole process when one allocation is larger than a worker's heap ceiling can absorb
 * (`$pad('', 3e8)`, a string doubled until `$uppercase` flattens it): Node's worker limits only cover
 * heaps that grow step by step. Here such a run takes down this process, not the engine, which fails
 * the runs in it and starts another.
 */
import { MessageChannel, type MessagePort } from 'node:worker_threads'
import { Piscina } from 'piscina'
import type { IsolatedOutcome, IsolatedTask, WorkerMessage } from './worker-protocol.js'
import { type FromSandbox, SANDBOX_OPTIONS_VARIABLE, type SandboxOptions, type ToSandbox } from './sandbox-protocol.js'

const options = JSON.parse(process.env[SANDBOX_OPTIONS_VARIABLE] ?? '{}') as SandboxOptions

const pool = new Piscina<IsolatedTask, IsolatedOutcome>({
  filename: new URL('./worker.js', import.meta.url).href,
  // Every worker stays warm: a worker's start costs hundreds of ms of CPU, paid once, not while another tenant waits.
  minThreads: options.threads,
  maxThreads: options.threads,
  idleTimeout: 30_000,
  resourceLimits: {
    maxOldGenerationSizeMb: options.memoryMb,
    maxYoungGenerationSizeMb: Math.max(4, Math.floor(options.memoryMb / 8)),
    stackSizeMb: 4,
  },
})

const runs = new Map<number, { port: MessagePort; controller: AbortController }>()

function send(message: FromSandbox): void {
  // The engine may be gone (closing): what is left to say has no one to hear it.
  if (process.connected) process.send?.(message)
}

function start(id: number, task: Extract<ToSandbox, { type: 'run' }>['task']): void {
  const channel = new MessageChannel()
  const controller = new AbortController()
  runs.set(id, { port: channel.port1, controller })
  channel.port1.on('message', (message: WorkerMessage) => send({ type: 'port', id, message }))
  pool
    .run({ ...task, port: channel.port2 }, { transferList: [channel.port2], signal: controller.signal })
    .then(
      (outcome) => send({ type: 'done', id, outcome }),
      (error: Error & { code?: string }) => send({ type: 'failed', id, error: { code: error.code, message: error.message } }),
    )
    .finally(() => {
      channel.port1.close()
      runs.delete(id)
    })
}

process.on('message', (message: ToSandbox) => {
  if (message.type === 'run') start(message.id, message.task)
  else if (message.type === 'port') runs.get(message.id)?.port.postMessage(message.message)
  else runs.get(message.id)?.controller.abort()
})

// The sandbox lives as long as the engine's channel: a Ctrl-C reaches the whole process group, and the
// engine, draining its requests, still needs the runs in flight. It ends when the engine closes the
// channel, or dies, and nothing more can come.
for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => undefined)
process.on('disconnect', () => {
  void pool.destroy().finally(() => process.exit(0))
})
