/**
 * In-process wake-ups of long polls (docs/reference/external-tasks.md#long-polling): a task created
 * or given back on this engine wakes the fetchAndLock requests waiting on its tenant and topic at
 * once. Tasks of other engines are found by the waiters' short poll instead.
 */
import { type Tenant, tenantKey } from '../../../store/tenant.js'

interface Listener {
  keys: ReadonlySet<string>
  wake(): void
}

/** A listener registered before a look at the store, so a task created meanwhile is not missed. */
export interface Wakeup {
  /** Resolves when woken, after `timeoutMs`, when `signal` aborts, or when the engine closes. */
  until(timeoutMs: number, signal: AbortSignal): Promise<void>
  cancel(): void
}

function keyOf(tenant: Tenant, topic: string): string {
  return `${tenantKey(tenant)}\n${topic}`
}

export class TaskSignals {
  private readonly listeners = new Set<Listener>()
  private closed = false

  /** How many long polls listen now. */
  get listening(): number {
    return this.listeners.size
  }

  get isClosed(): boolean {
    return this.closed
  }

  listen(tenant: Tenant, topics: readonly string[]): Wakeup {
    let woken = this.closed
    let resolveWait: (() => void) | undefined
    const listener: Listener = {
      keys: new Set(topics.map((topic) => keyOf(tenant, topic))),
      wake: () => {
        woken = true
        resolveWait?.()
      },
    }
    this.listeners.add(listener)
    return {
      until: (timeoutMs, signal) =>
        new Promise<void>((resolve) => {
          if (woken || signal.aborted) return resolve()
          const timer = setTimeout(done, timeoutMs)
          function done(): void {
            clearTimeout(timer)
            signal.removeEventListener('abort', done)
            resolve()
          }
          resolveWait = done
          signal.addEventListener('abort', done, { once: true })
        }),
      cancel: () => {
        this.listeners.delete(listener)
      },
    }
  }

  /** A task of the tenant's topic became available on this engine. */
  notify(tenant: Tenant, topic: string): void {
    const key = keyOf(tenant, topic)
    for (const listener of this.listeners) if (listener.keys.has(key)) listener.wake()
  }

  /** The engine closes: every wait ends now. */
  close(): void {
    this.closed = true
    for (const listener of this.listeners) listener.wake()
  }
}
