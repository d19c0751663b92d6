/**
 * The messages between the engine and its sandbox process (sandbox-process.ts), which holds the
 * flow-function worker threads. A run's host calls cross as `port` messages: the sandbox relays what
 * the worker's MessagePort says to the engine and the engine's replies back, so the worker talks to
 * the engine's host as if they shared a process.
 */
import type { HostReply, IsolatedOutcome, IsolatedTask, WorkerMessage } from './worker-protocol.js'

export interface SandboxOptions {
  /** Worker threads at most (FLOW_WORKERS). */
  threads: number
  /** Heap ceiling of one worker in MiB (FLOW_WORKER_MEMORY_MB); a run past it fails. */
  memoryMb: number
}

/** A task as it crosses to the sandbox: the port stays behind, its messages are relayed. */
export type SandboxTask = Omit<IsolatedTask, 'port'>

export type ToSandbox =
  { type: 'run'; id: number; task: SandboxTask } | { type: 'port'; id: number; message: HostReply } | { type: 'abort'; id: number }

export type FromSandbox =
  | { type: 'port'; id: number; message: WorkerMessage }
  | { type: 'done'; id: number; outcome: IsolatedOutcome }
  | { type: 'failed'; id: number; error: { code?: string; message: string } }

/** Where the sandbox finds its options: fork passes no arguments but argv and the environment. */
export const SANDBOX_OPTIONS_VARIABLE = 'WORKFLOW_SANDBOX_OPTIONS'
