/**
 * An external task worker (docs/sdk.md#external-task-workers): `subscribe(topic, handler, options)`
 * long-polls `fetchAndLock` for the topic, runs the handler for each task it locks (up to
 * `maxTasks` at once), extends the task's lock while the handler runs, completes the task with
 * what the handler returns, or reports its failure (the task's retries less one, with a growing
 * retry timeout). `stop()` ends the polling and waits for the running handlers.
 *
 *   const worker = new ExternalTaskWorker(client)   // a client acting as a system user of the tenant
 *   worker.subscribe('payroll-export', async (task) => ({ reference: await payroll.export(task.input) }), { lockDuration: 30_000 })
 *   await worker.stop()
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as delay } from 'node:timers/promises'
import type { Schemas, WorkflowClient } from './client.js'

export type ExternalTask = Schemas['LockedExternalTask']

/** What a handler may do while it works on a task. */
export interface TaskContext {
  /** Aborts when the worker stops (the handler may give up early; the task is then reported failed). */
  signal: AbortSignal
}

/** Returns the task's output (written at the step's `as`, or merged into the instance's data); a throw is a failure. */
export type ExternalTaskHandler = (task: ExternalTask, context: TaskContext) => unknown

export interface SubscribeOptions {
  /** How long a lock lasts (ms; default 30 000); it is extended every half of it while the handler runs. */
  lockDuration?: number
  /** Tasks handled at once (default 1). */
  maxTasks?: number
  /** How long one fetchAndLock waits for a task (ms, at most 60 000; default 20 000). */
  asyncResponseTimeout?: number
  /** A failure's retry timeout: `backoffMs` × 2^(this worker's failures of the task − 1) (default 1 000, at most `maxBackoffMs`). */
  backoffMs?: number
  maxBackoffMs?: number
  /** Told of what goes wrong outside a handler (the service unreachable, a completion refused). */
  onError?: (error: unknown, task?: ExternalTask) => void
}

export interface Subscription {
  readonly topic: string
  /** Handlers running now. */
  readonly running: number
  /** Stops polling; resolves once every running handler has ended and its task was completed or reported. */
  stop(): Promise<void>
}

const DEFAULTS = { lockDuration: 30_000, maxTasks: 1, asyncResponseTimeout: 20_000, backoffMs: 1_000, maxBackoffMs: 60_000 }
/** After a failed fetch (the service unreachable), the first wait; it doubles up to 30 s. */
const FETCH_RETRY_MS = 500

export class ExternalTaskWorker {
  readonly workerId: string
  private readonly subscriptions = new Set<Subscription>()

  constructor(
    private readonly client: WorkflowClient,
    options: { workerId?: string } = {},
  ) {
    this.workerId = options.workerId ?? `worker-${randomUUID()}`
  }

  subscribe(topic: string, handler: ExternalTaskHandler, options: SubscribeOptions = {}): Subscription {
    const subscription = new TopicSubscription(this.client, this.workerId, topic, handler, { ...DEFAULTS, ...options })
    this.subscriptions.add(subscription)
    return subscription
  }

  /** Stops every subscription and waits for their running handlers. */
  async stop(): Promise<void> {
    await Promise.all([...this.subscriptions].map((subscription) => subscription.stop()))
  }
}

class TopicSubscription implements Subscription {
  private readonly stopping = new AbortController()
  private readonly handlers = new Set<Promise<void>>()
  private readonly failures = new Map<string, number>()
  private readonly loop: Promise<void>

  constructor(
    private readonly client: WorkflowClient,
    private readonly workerId: string,
    readonly topic: string,
    private readonly handler: ExternalTaskHandler,
    private readonly options: Required<Omit<SubscribeOptions, 'onError'>> & Pick<SubscribeOptions, 'onError'>,
  ) {
    this.loop = this.poll()
  }

  get running(): number {
    return this.handlers.size
  }

  async stop(): Promise<void> {
    this.stopping.abort()
    await this.loop
    await Promise.allSettled([...this.handlers])
  }

  private async poll(): Promise<void> {
    const signal = this.stopping.signal
    let fetchRetryMs = FETCH_RETRY_MS
    while (!signal.aborted) {
      const free = this.options.maxTasks - this.handlers.size
      if (free <= 0) {
        await Promise.race([...this.handlers, new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }))])
        continue
      }
      let tasks: ExternalTask[]
      try {
        tasks = await this.client.post('/external/worker/fetchAndLock', {
          body: {
            workerId: this.workerId,
            topics: [{ topic: this.topic, lockDuration: this.options.lockDuration }],
            maxTasks: free,
            asyncResponseTimeout: this.options.asyncResponseTimeout,
          },
          signal,
        })
        fetchRetryMs = FETCH_RETRY_MS
      } catch (error) {
        if (signal.aborted) return
        this.options.onError?.(error)
        await delay(fetchRetryMs, undefined, { signal }).catch(() => undefined)
        fetchRetryMs = Math.min(fetchRetryMs * 2, 30_000)
        continue
      }
      for (const task of tasks) {
        const running: Promise<void> = this.handle(task).finally(() => this.handlers.delete(running))
        this.handlers.add(running)
      }
    }
  }

  private async handle(task: ExternalTask): Promise<void> {
    const path = { externalTaskId: task.externalTaskId }
    // The lock is extended every half of its duration while the handler works.
    const extension = setInterval(() => {
      this.client
        .post('/external/worker/{externalTaskId}/extendLock', {
          params: { path },
          body: { workerId: this.workerId, newDuration: this.options.lockDuration },
        })
        .catch((error: unknown) => this.options.onError?.(error, task))
    }, this.options.lockDuration / 2)
    extension.unref()
    let outcome: { output: unknown } | { error: unknown }
    try {
      outcome = { output: await this.handler(task, { signal: this.stopping.signal }) }
    } catch (error) {
      outcome = { error }
    } finally {
      clearInterval(extension)
    }
    try {
      if ('output' in outcome) {
        await this.client.post('/external/worker/{externalTaskId}/complete', {
          params: { path },
          body: { workerId: this.workerId, ...(outcome.output === undefined ? {} : { output: outcome.output }) },
        })
        this.failures.delete(task.externalTaskId)
      } else {
        const failures = (this.failures.get(task.externalTaskId) ?? 0) + 1
        const retries = Math.max(task.retries - 1, 0)
        if (retries > 0) this.failures.set(task.externalTaskId, failures)
        else this.failures.delete(task.externalTaskId)
        const retryTimeout = Math.min(this.options.backoffMs * 2 ** (failures - 1), this.options.maxBackoffMs)
        await this.client.post('/external/worker/{externalTaskId}/failure', {
          params: { path },
          body: { workerId: this.workerId, errorMessage: messageOf(outcome.error), retries, retryTimeout },
        })
      }
    } catch (error) {
      this.options.onError?.(error, task)
    }
  }
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (message || 'the handler failed').slice(0, 4000)
}
