/**
 * The one error the model's checks and the runtime throw: a kind the engine maps to its answer
 * (services/engine/instances/runtime-errors.ts), a message, and where in the model it arose.
 */

export type RuntimeErrorKind =
  /** Input or output does not satisfy a schema (start input: wm3004; function input/output). */
  | 'validation'
  /** A `fail` node: a business rule said no (400 customerror, the node's `code` when given). */
  | 'business'
  /** Time limit, step limit, call depth, HTTP failure, expression error: a technical failure. */
  | 'technical'
  /** Unknown task, step, thread or function. */
  | 'notFound'
  /** The task is not open, or the action does not exist on the step. */
  | 'conflict'
  /**
   * A budget of the whole request ran out (outbound calls, a data filter's size, a search's work):
   * the request fails and stores nothing, whatever a step's `onError` says. `details.code` is the
   * engine's catalogue code, `details.limit` the setting that bounds it.
   */
  | 'limit'

export class RuntimeError extends Error {
  constructor(
    readonly kind: RuntimeErrorKind,
    message: string,
    readonly details: {
      code?: string
      path?: string
      /** The fault without its location, for messages that name the location their own way. */ problem?: string
      target?: 'task' | 'step' | 'thread' | 'function' | 'action' | 'externalTask'
      /** For a `limit` failure: the configuration variable whose value was reached. */
      limit?: string
    } = {},
  ) {
    super(message)
    this.name = 'RuntimeError'
  }
}
