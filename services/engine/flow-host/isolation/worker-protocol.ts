/**
 * The messages between the engine's thread and a worker running a flow function (worker.ts): the
 * task handed to the worker, its outcome, and the host calls the worker makes back over the task's
 * MessagePort (the engine's FlowHost stays on the engine's thread). Errors cross as plain data.
 */
import type { MessagePort } from 'node:worker_threads'
import {
  type DataOperation,
  type FunctionRunResult,
  type HttpRequest,
  type IsolatedRun,
  RuntimeError,
  type RunLimits,
  type RuntimeUser,
} from '../../../../runtime/types.js'

export interface IsolatedTask {
  run: IsolatedRun
  actor: RuntimeUser
  limits: RunLimits
  /** The worker's end of the channel to the engine's host. */
  port: MessagePort
}

export interface SerializedError {
  kind: RuntimeError['kind']
  message: string
  details: RuntimeError['details']
}

export type IsolatedOutcome = { result: FunctionRunResult } | { error: SerializedError }

/** What the worker asks the engine's thread for. */
export type HostCall =
  | { method: 'constant'; argument: string }
  | { method: 'http'; argument: HttpRequest }
  | { method: 'data'; argument: DataOperation }
  /** The definition of a function a `call` node names. */
  | { method: 'resolve'; argument: string }

export type WorkerMessage = { type: 'started' } | ({ type: 'call'; id: number } & HostCall)

export type HostReply = { type: 'reply'; id: number; value: unknown } | { type: 'reply'; id: number; error: SerializedError }

/** Any failure as plain data; what is not a RuntimeError becomes a technical one. */
export function serializeError(error: unknown): SerializedError {
  if (error instanceof RuntimeError) return { kind: error.kind, message: error.message, details: error.details }
  return { kind: 'technical', message: error instanceof Error ? error.message : String(error), details: {} }
}

export function deserializeError(error: SerializedError): RuntimeError {
  return new RuntimeError(error.kind, error.message, error.details)
}
