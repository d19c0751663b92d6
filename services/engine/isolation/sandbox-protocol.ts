/**
 * The messages between the engine and its sandbox process (sandbox-process.ts), which holds the
 * flow-function worker threads. A run's host calls cross as `port` messages: the engine and the
 * sandbox each keep one end of a MessagePort pair and relay what arrives on it, so the worker and
 * the engine's host talk as if they shared a process.
 */
import type { IsolatedOutcome, IsolatedTask } from '../runtime/flow/isolation-protocol.js'

export interface SandboxOptions {
  /** Worker threads at most. */
  threads: number
  /** Heap ceiling of one worker in MiB. */
  memoryMb: number
}

/** A task as it crosses to the sandbox: the port stays behind, its messages are relayed. */
export type SandboxTask = Omit<IsolatedTask, 'port'>

export type ToSandbox =
  { type: 'run'; id: number; task: SandboxTask } | { type: 'port'; id: number; message: unknown } | { type: 'abort'; id: number }

export type FromSandbox =
  | { type: 'port'; id: number; message: unknown }
  | { type: 'done'; id: number; outcome: IsolatedOutcome }
  | { type: 'failed'; id: number; error: { code?: string; message: string } }

/** Where the sandbox finds its options: fork passes no arguments but argv and the environment. */
export const SANDBOX_OPTIONS_VARIABLE = 'WORKFLOW_SANDBOX_OPTIONS'
