/**
 * The engine's side of the sandbox process (sandbox-process.ts): starts it with the first run, hands
 * it runs, passes on what each run's worker says and the engine's replies, and, when the process ends
 * under them (a run's allocation too large for any heap ceiling), fails the runs it held and starts a
 * new one for the next run.
 */
import { type ChildProcess, fork } from 'node:child_process'
import type { HostReply, IsolatedOutcome, WorkerMessage } from './worker-protocol.js'
import { type FromSandbox, SANDBOX_OPTIONS_VARIABLE, type SandboxOptions, type SandboxTask, type ToSandbox } from './sandbox-protocol.js'

/** What the worker of a run says (it started, a host call), with the way to answer its calls. */
export type WorkerListener = (message: WorkerMessage, reply: (answer: HostReply) => void) => void

/** What a run waits for: its outcome, and who hears its worker. */
interface PendingRun {
  listen: WorkerListener
  reply: (answer: HostReply) => void
  resolve: (outcome: IsolatedOutcome) => void
  reject: (error: Error) => void
}

/** A failure of the sandbox rather than of the run's code: `code` as Node names worker failures. */
export class SandboxError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message)
  }
}

export class Sandbox {
  private child: ChildProcess | undefined
  private nextId = 0
  private readonly pending = new Map<number, PendingRun>()

  constructor(private readonly options: SandboxOptions) {}

  /**
   * Runs `task` in a worker of the sandbox; `listen` hears what the worker says. A reply after the
   * run ended is dropped by the sandbox, which no longer knows the run.
   */
  run(task: SandboxTask, listen: WorkerListener, signal: AbortSignal): Promise<IsolatedOutcome> {
    const child = this.started()
    const id = ++this.nextId
    return new Promise<IsolatedOutcome>((resolve, reject) => {
      const reply = (answer: HostReply): void => this.send(child, { type: 'port', id, message: answer })
      this.pending.set(id, { listen, reply, resolve, reject })
      if (this.pending.size === 1) child.channel?.ref()
      signal.addEventListener('abort', () => this.send(child, { type: 'abort', id }), { once: true })
      this.send(child, { type: 'run', id, task })
    })
  }

  /** Ends the sandbox: it destroys its workers once the channel closes. */
  close(): void {
    this.child?.disconnect()
    this.child = undefined
  }

  private started(): ChildProcess {
    if (this.child?.connected) return this.child
    const child = fork(new URL('./sandbox-process.js', import.meta.url), {
      env: { ...process.env, [SANDBOX_OPTIONS_VARIABLE]: JSON.stringify(this.options) },
      // Structured clone, as between threads: host calls and outcomes cross as they did before the process.
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    })
    child.on('message', (message: FromSandbox) => this.received(message))
    child.on('exit', (code, signal) => this.exited(child, signal ?? String(code)))
    // An idle sandbox does not keep the engine alive; one with runs in flight does (see run, settle).
    child.channel?.unref()
    this.child = child
    return child
  }

  private send(child: ChildProcess, message: ToSandbox): void {
    if (child.connected) child.send(message)
  }

  private received(message: FromSandbox): void {
    const run = this.pending.get(message.id)
    if (!run) return
    if (message.type === 'port') run.listen(message.message, run.reply)
    else if (message.type === 'done') this.settle(message.id, () => run.resolve(message.outcome))
    else this.settle(message.id, () => run.reject(new SandboxError(message.error.message, message.error.code)))
  }

  private settle(id: number, answer: () => void): void {
    this.pending.delete(id)
    if (this.pending.size === 0) this.child?.channel?.unref()
    answer()
  }

  /** The process ended: its runs fail, and the next run starts another. */
  private exited(child: ChildProcess, how: string): void {
    if (this.child === child) this.child = undefined
    for (const [id, run] of this.pending) {
      this.settle(id, () => run.reject(new SandboxError(`the functions' sandbox process ended (${how})`, 'ERR_SANDBOX_EXITED')))
    }
  }
}
