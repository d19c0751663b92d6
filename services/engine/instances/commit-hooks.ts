/**
 * What else a stored change of an instance writes or tells, registered by the folders that own it:
 * events/ (the notification record's notice and the webhook deliveries), jobs/ (the escalation jobs of new
 * tasks) and operations/ (the workflow metrics). The commit asks every hook for its writes, stores
 * them in the same atomic batch as the instance, and tells each hook once the batch is stored, so a
 * lost compare-and-set leaves none of them and instances/ imports none of those folders. A hook may
 * also derive fields of the stored instance that need what instances/ does not know (the model's
 * escalations and inform list): they are written with it.
 */
import type { NotificationEventType } from '../../../openapi/generated/schemas.js'
import type { HookDerivedFields } from '../../../store/collections.js'
import type { AtomicWrite } from '../../../store/port.js'
import type { CompiledProcess, ProcessState, RuntimeEffect } from '../../../runtime/types.js'
import type { RequestEnvironment } from '../flow-host/environment.js'

/** A change as the hooks see it, once the commit has checked it and before it is stored. */
export interface ChangeToStore {
  /** The state to store (with `lastUpdate` and the contributors of this change). */
  state: ProcessState
  /** The stored state the change was computed from; absent for a new instance. */
  previous?: ProcessState
  effects: readonly RuntimeEffect[]
  compiled: CompiledProcess
  env: RequestEnvironment
  /** The operation's notification event, before the effects turn it into `Finished` or `Failed`. */
  event: NotificationEventType
  /** The instance's version once the change is stored (1 for a new instance). */
  version: number
  now: Date
  /** The change creates the instance. */
  started: boolean
}

export interface CommitHook {
  /** Names the hook in logs and errors. */
  readonly name: string
  /** Writes stored in the change's atomic batch; a failure here fails the commit before anything is stored. */
  writesFor?(change: ChangeToStore): readonly AtomicWrite[] | Promise<readonly AtomicWrite[]>
  /** Fields of the stored instance this hook derives from the change, written with it; a failure fails the commit. */
  fieldsFor?(change: ChangeToStore): HookDerivedFields | Promise<HookDerivedFields>
  /** Told once the batch is stored, with the writes this hook asked for. */
  stored?(change: ChangeToStore, writes: readonly AtomicWrite[]): void
}

/** The hooks of one engine, asked in the order they were added. */
export class CommitHooks {
  private readonly hooks: CommitHook[] = []

  add(hook: CommitHook): void {
    this.hooks.push(hook)
  }

  /**
   * Each hook's writes for the change, in the hooks' order. Most hooks answer at once: only an
   * answer that is a promise is awaited, since every await costs the commit a turn of the queue.
   */
  async writesFor(change: ChangeToStore): Promise<Array<readonly AtomicWrite[]>> {
    const writes: Array<readonly AtomicWrite[]> = []
    for (const hook of this.hooks) {
      const answer = hook.writesFor?.(change)
      writes.push((answer instanceof Promise ? await answer : answer) ?? [])
    }
    return writes
  }

  /** The stored instance's fields every hook derives from the change (a promise awaited only when a hook answers one). */
  async fieldsFor(change: ChangeToStore): Promise<HookDerivedFields> {
    const fields: HookDerivedFields = {}
    for (const hook of this.hooks) {
      const answer = hook.fieldsFor?.(change)
      Object.assign(fields, answer instanceof Promise ? await answer : answer)
    }
    return fields
  }

  /** Tells every hook the change is stored, with the writes it asked for (`writes` as writesFor answered). */
  stored(change: ChangeToStore, writes: ReadonlyArray<readonly AtomicWrite[]>): void {
    this.hooks.forEach((hook, index) => hook.stored?.(change, writes[index] ?? []))
  }
}
