/**
 * Flow functions are tenants' code: they run in a pool of worker threads (piscina) held by a sandbox
 * process (sandbox.ts), never on the engine's thread nor in its process. A run is stopped at its time
 * limit however it spins (a catastrophic regex, tail recursion, a busy loop): its worker is terminated
 * and the run fails with the runtime's technical timeout error. Workers have a memory ceiling
 * (`resourceLimits`); an allocation too large for it ends the sandbox process, which the engine
 * replaces. One tenant may occupy at most half of the pool, so it cannot take every worker from the others.
 *
 * The worker reaches the engine's FlowHost (constants, data collections, outbound HTTP, called
 * functions' definitions) over a MessagePort relayed by the sandbox; those calls run here, on the
 * engine's thread.
 */
import {
  deserializeError,
  type HostReply,
  type IsolatedOutcome,
  serializeError,
  type WorkerMessage,
} from '../runtime/flow/isolation-protocol.js'
import {
  type FlowFunctionDefinition,
  type FunctionIsolation,
  type FunctionRunResult,
  type IsolatedRun,
  RuntimeError,
  type RunEnvironment,
} from '../runtime/types.js'
import { Sandbox } from './sandbox.js'
import type { SandboxOptions } from './sandbox-protocol.js'

export type FunctionPoolOptions = SandboxOptions

/**
 * How long a run may wait for a worker: the runs of its tenant ahead of it (each ends by its limit)
 * and a worker's start (module loading, slow on a busy machine) are not the run's own time.
 */
function startBoundMs(timeoutMs: number): number {
  return Math.max(2 * timeoutMs, 30_000)
}

/** Grace past the limit before the worker is terminated: the run's own deadline check normally ends it first. */
function killGraceMs(timeoutMs: number): number {
  return Math.min(50, Math.ceil(timeoutMs * 0.03))
}

function technical(message: string): RuntimeError {
  return new RuntimeError('technical', message)
}

/** A counting semaphore per tenant: how many of a tenant's runs hold a worker, and who waits. */
class TenantShare {
  private running = 0
  private readonly waiting: Array<() => void> = []

  constructor(private readonly limit: number) {}

  /** Calls `waiter` once the tenant may use a worker: at once when under its share, else in turn. */
  acquire(waiter: () => void): void {
    if (this.running < this.limit) {
      this.running++
      waiter()
    } else this.waiting.push(waiter)
  }

  /** Gives up a place in the queue that was never granted; false when it was granted meanwhile. */
  withdraw(waiter: () => void): boolean {
    const index = this.waiting.indexOf(waiter)
    if (index < 0) return false
    this.waiting.splice(index, 1)
    return true
  }

  release(): void {
    const next = this.waiting.shift()
    if (next) next()
    else this.running--
  }

  get idle(): boolean {
    return this.running === 0 && this.waiting.length === 0
  }
}

export class FunctionPool {
  /** The workers live in a process of their own, started with the first run: an engine that never runs a function never pays for it. */
  private readonly sandbox: Sandbox
  private readonly shares = new Map<string, TenantShare>()
  private readonly tenantLimit: number

  constructor(private readonly options: FunctionPoolOptions) {
    this.tenantLimit = Math.max(1, Math.floor(options.threads / 2))
    this.sandbox = new Sandbox(options)
  }

  /** The isolation the run environments of one tenant use. */
  forTenant(tenant: string): FunctionIsolation {
    return { run: (run, env, resolve) => this.run(tenant, run, env, resolve) }
  }

  close(): Promise<void> {
    this.sandbox.close()
    return Promise.resolve()
  }

  private share(tenant: string): TenantShare {
    let share = this.shares.get(tenant)
    if (!share) {
      share = new TenantShare(this.tenantLimit)
      this.shares.set(tenant, share)
    }
    return share
  }

  private async run(
    tenant: string,
    run: IsolatedRun,
    env: RunEnvironment,
    resolve: (functionId: string) => Promise<FlowFunctionDefinition | undefined>,
  ): Promise<FunctionRunResult> {
    const { timeoutMs } = env.limits
    // A run that began on the engine's thread has only what is left of its limit.
    const limitMs = Math.max(1, timeoutMs - (run.request.spentMs ?? 0))
    const share = this.share(tenant)
    const controller = new AbortController()
    let started = false
    let timedOut = false
    // Settles the run at its limit even while its worker is still dying: V8 interrupts JavaScript
    // at once, but not a builtin in the middle of its work (a 20 MB `$pad`), and the client's answer
    // must not wait for that.
    let expire: (reason: Error) => void = () => undefined
    const expired = new Promise<never>((_, reject) => {
      expire = reject
    })
    const stop = (): void => {
      timedOut = true
      controller.abort()
      expire(new Error('the run reached its limit'))
    }
    // Waiting for a worker is bounded too; once the run starts, the limit is the run's.
    let timer = setTimeout(stop, startBoundMs(timeoutMs))
    try {
      await this.acquire(share, controller.signal)
      let running: Promise<IsolatedOutcome> | undefined
      try {
        const listen = (message: WorkerMessage, reply: (answer: HostReply) => void): void => {
          if (message.type === 'started') {
            started = true
            clearTimeout(timer)
            timer = setTimeout(stop, limitMs + killGraceMs(timeoutMs))
            return
          }
          void answer(reply, message, env, resolve)
        }
        running = this.sandbox.run({ run, actor: env.actor, limits: env.limits }, listen, controller.signal)
        const outcome = await Promise.race([running, expired])
        if ('error' in outcome) throw deserializeError(outcome.error)
        return outcome.result
      } finally {
        // The tenant's place is given back when its worker is free, not when the answer goes: a run
        // answered at its limit may still hold its worker for a moment, and that counts as the tenant's.
        const release = (): void => {
          share.release()
          if (share.idle) this.shares.delete(tenant)
        }
        if (running) running.then(release, release)
        else release()
      }
    } catch (error) {
      if (error instanceof RuntimeError) throw error
      if (timedOut) {
        throw technical(
          started
            ? `the function ran longer than ${timeoutMs} ms`
            : `the function could not start within ${startBoundMs(timeoutMs)} ms: every worker is busy`,
        )
      }
      if ((error as { code?: string }).code === 'ERR_WORKER_OUT_OF_MEMORY') throw technical('the function used more memory than a run may')
      throw technical(`the function's worker failed: ${(error as Error).message}`)
    } finally {
      clearTimeout(timer)
      if (share.idle) this.shares.delete(tenant)
    }
  }

  private acquire(share: TenantShare, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let granted = false
      const grant = (): void => {
        granted = true
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        if (!granted && share.withdraw(grant)) reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      share.acquire(grant)
    })
  }
}

/** Answers one host call of a worker with the engine's own host. */
async function answer(
  reply: (answer: HostReply) => void,
  message: Extract<WorkerMessage, { type: 'call' }>,
  env: RunEnvironment,
  resolve: (functionId: string) => Promise<FlowFunctionDefinition | undefined>,
): Promise<void> {
  let answered: HostReply
  try {
    const value =
      message.method === 'constant'
        ? await env.host.constant(message.argument)
        : message.method === 'http'
          ? await env.host.http(message.argument)
          : message.method === 'data'
            ? await env.host.data(message.argument)
            : await resolve(message.argument)
    answered = { type: 'reply', id: message.id, value }
  } catch (error) {
    answered = { type: 'reply', id: message.id, error: serializeError(error) }
  }
  // The run may have ended meanwhile (timed out): the sandbox drops the reply.
  reply(answered)
}
