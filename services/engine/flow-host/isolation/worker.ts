/**
 * A worker of the engine's flow-function pool (piscina): runs one function per task, inline on the
 * worker's thread, and reaches the engine's host (constants, outbound HTTP, data collections, the
 * definitions of called functions) over the task's MessagePort. The pool terminates a worker whose
 * run outlives its limit, so nothing here has to be interruptible.
 */
import { randomUUID } from 'node:crypto'
import { constants, setPriority } from 'node:os'
import type { MessagePort } from 'node:worker_threads'
import type { DataOperation, FlowFunctionDefinition, HttpRequest, HttpResponse } from '../../../../runtime/types.js'
import { type CompiledFunction, FunctionCompiler } from '../../../../runtime/flow/compile.js'
import { executeInline, type FunctionEnvironment } from '../../../../runtime/flow/execute.js'
import {
  deserializeError,
  type HostCall,
  type HostReply,
  type IsolatedOutcome,
  type IsolatedTask,
  serializeError,
  type WorkerMessage,
} from './worker-protocol.js'

/** Compiled functions kept by one worker; cleared when full (definitions change rarely, workers are recycled). */
const MAX_CACHED_FUNCTIONS = 500

class BoundedCache extends Map<string, CompiledFunction> {
  override set(key: string, value: CompiledFunction): this {
    if (this.size >= MAX_CACHED_FUNCTIONS) this.clear()
    return super.set(key, value)
  }
}

const compiler = new FunctionCompiler(new BoundedCache())

// A run that fills the worker's heap must end as the pool's out-of-memory error, never take the engine down.
// With source maps on (`--enable-source-maps`, also through NODE_OPTIONS, which workers inherit), the
// stack of the error thrown at the heap limit is mapped by allocating more, and V8 then aborts the whole
// process; tenants' code gains nothing from the engine's source maps.
process.setSourceMapsEnabled(false)

// Tenants' code gives way to the engine's own thread: on a busy machine a spinning run must not take
// the CPU the engine needs to answer everyone else. Linux keeps the nice value per thread, so this
// lowers this worker only (to nice 10: it yields to the engine, yet still gets a share of a machine busy with other work); where it is
// refused, the worker runs at the normal priority.
try {
  setPriority(constants.priority.PRIORITY_BELOW_NORMAL)
} catch {
  // Not permitted here (some containers): the pool still isolates, only without the priority.
}

/** The engine's host as seen from the worker: each call is a message answered by the engine's thread. */
class PortHost {
  private nextId = 0
  private readonly pending = new Map<number, { resolve(value: unknown): void; reject(error: unknown): void }>()

  constructor(private readonly port: MessagePort) {
    port.on('message', (reply: HostReply) => {
      const waiting = this.pending.get(reply.id)
      if (!waiting) return
      this.pending.delete(reply.id)
      if ('error' in reply) waiting.reject(deserializeError(reply.error))
      else waiting.resolve(reply.value)
    })
  }

  send(message: WorkerMessage): void {
    this.port.postMessage(message)
  }

  call(call: HostCall): Promise<unknown> {
    const id = this.nextId++
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.send({ type: 'call', id, ...call })
    })
  }

  constant = (name: string) => this.call({ method: 'constant', argument: name }) as Promise<string | undefined>
  http = (request: HttpRequest) => this.call({ method: 'http', argument: request }) as Promise<HttpResponse>
  data = (operation: DataOperation) => this.call({ method: 'data', argument: operation })

  async resolve(functionId: string): Promise<CompiledFunction | undefined> {
    const definition = (await this.call({ method: 'resolve', argument: functionId })) as FlowFunctionDefinition | undefined
    return definition === undefined ? undefined : compiler.compile(functionId, definition)
  }

  close(): void {
    this.port.close()
  }
}

export default async function runIsolated(task: IsolatedTask): Promise<IsolatedOutcome> {
  const host = new PortHost(task.port)
  try {
    const fn = compiler.compile(task.run.functionId, task.run.definition)
    // The run's limit starts now: compiling (cached after the first run) is the engine's work, bounded by the pool's start bound.
    host.send({ type: 'started' })
    const env: FunctionEnvironment = { actor: task.actor, limits: task.limits, host, now: () => new Date(), newId: randomUUID }
    return { result: await executeInline(fn, task.run.request, env, (functionId) => host.resolve(functionId)) }
  } catch (error) {
    return { error: serializeError(error) }
  } finally {
    host.close()
  }
}
