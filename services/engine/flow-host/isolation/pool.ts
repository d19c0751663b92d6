/**
 * Flow functions are tenants' code: they run in a pool of worker threads (piscina) held by a sandbox
 * process (sandbox.ts), never on the engine's thread nor in its process. A run is stopped at its time
 * limit however it spins (a catastrophic regex, tail recursion, a busy loop): its worker is terminated
 * and the run fails with the runtime's technical timeout error. Workers have a memory ceiling
 * (`resourceLimits`); an allocation too large for it ends the sandbox process, which the engine
 * replaces. One tenant holds at most its share of the workers, and waiting tenants are served round
 * robin (WorkerScheduler), so a tenant cannot take the pool, or the cores, from the others.
 *
 * The worker reaches the engine's FlowHost (constants, data collections, outbound HTTP, called
 * functions' definitions) over a MessagePort relayed by the sandbox; those calls run here, on the
 * engine's thread.
 */
import { availableParallelism } from 'node:os'
import {
  deserializeError,
  type HostReply,
  type IsolatedOutcome,
  serializeError,
  type WorkerMessage,
} from './worker-protocol.js'
import {
  type FlowFunctionDefinition,
  type FunctionIsolation,
  type FunctionRunResult,
  type IsolatedRun,
  RuntimeError,
  type RunEnvironment,
} from '../../../../runtime/types.js'
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

/**
 * Hands out the pool's workers: at most `threads` runs hold one at a time, and a tenant at most
 * `share` of them. A run that finds no worker waits in its tenant's queue; when a worker frees, the
 * tenants with waiting runs are served round robin, so a tenant flooding the pool gets its next
 * worker only after every other waiting tenant got one. Runs reach piscina only with a worker free
 * for them, so its own first-come queue never holds one tenant's run behind another's.
 */
export class WorkerScheduler {
  private busy = 0
  private readonly running = new Map<string, number>()
  /** Waiting runs by tenant; a Map keeps insertion order, and a served tenant goes to its end. */
  private readonly waiting = new Map<string, Array<() => void>>()

  constructor(
    private readonly threads: number,
    private readonly share: number,
  ) {}

  /** Calls `grant` once the run may take a worker: at once when one is free within the tenant's share, else in turn. */
  acquire(tenant: string, grant: () => void): void {
    const queue = this.waiting.get(tenant)
    if (queue) queue.push(grant)
    else this.waiting.set(tenant, [grant])
    this.dispatch()
  }

  /** Gives up a place in the queue that was never granted; false when it was granted meanwhile. */
  withdraw(tenant: string, grant: () => void): boolean {
    const queue = this.waiting.get(tenant)
    const index = queue?.indexOf(grant) ?? -1
    if (!queue || index < 0) return false
    queue.splice(index, 1)
    if (queue.length === 0) this.waiting.delete(tenant)
    return true
  }

  /** A run of `tenant` gave its worker back. */
  release(tenant: string): void {
    this.busy--
    const held = (this.running.get(tenant) ?? 1) - 1
    if (held > 0) this.running.set(tenant, held)
    else this.running.delete(tenant)
    this.dispatch()
  }

  private dispatch(): void {
    while (this.busy < this.threads) {
      const tenant = this.nextTenant()
      if (tenant === undefined) return
      const queue = this.waiting.get(tenant) as Array<() => void>
      const grant = queue.shift() as () => void
      // Round robin: the tenant just served goes behind every other waiting tenant.
      this.waiting.delete(tenant)
      if (queue.length > 0) this.waiting.set(tenant, queue)
      this.busy++
      this.running.set(tenant, (this.running.get(tenant) ?? 0) + 1)
      grant()
    }
  }

  /** The first tenant in turn that has a run waiting and holds less than its share. */
  private nextTenant(): string | undefined {
    for (const tenant of this.waiting.keys()) if ((this.running.get(tenant) ?? 0) < this.share) return tenant
    return undefined
  }
}

/**
 * How many workers one tenant may hold: half the pool, and half the machine's cores, so a tenant
 * whose runs spin leaves the other cores to the other tenants' runs (more workers than cores share
 * the cores, and a tenant holding two of them would slow every other run down).
 */
export function tenantShare(threads: number, cores: number): number {
  return Math.max(1, Math.floor(Math.min(threads, cores) / 2))
}

export class FunctionPool {
  /** The workers live in a process of their own, started with the first run: an engine that never runs a function never pays for it. */
  private readonly sandbox: Sandbox
  private readonly scheduler: WorkerScheduler

  constructor(options: FunctionPoolOptions) {
    this.scheduler = new WorkerScheduler(options.threads, tenantShare(options.threads, availableParallelism()))
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

  private async run(
    tenant: string,
    run: IsolatedRun,
    env: RunEnvironment,
    resolve: (functionId: string) => Promise<FlowFunctionDefinition | undefined>,
  ): Promise<FunctionRunResult> {
    const { timeoutMs } = env.limits
    // A run that began on the engine's thread has only what is left of its limit.
    const limitMs = Math.max(1, timeoutMs - (run.request.spentMs ?? 0))
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
      await this.acquire(tenant, controller.signal)
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
        const release = (): void => this.scheduler.release(tenant)
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
    }
  }

  private acquire(tenant: string, signal: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let granted = false
      const grant = (): void => {
        granted = true
        signal.removeEventListener('abort', onAbort)
        resolve()
      }
      const onAbort = (): void => {
        if (!granted && this.scheduler.withdraw(tenant, grant)) reject(signal.reason)
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.scheduler.acquire(tenant, grant)
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
