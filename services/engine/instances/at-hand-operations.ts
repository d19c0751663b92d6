/**
 * What the services do with an instance at hand (notes, files, headless calls, actions,
 * escalations): run one of its model's functions on the stored state, and commit a change computed
 * from it. The instance, its model version and the request's environment travel together, so each
 * call names only what the operation adds.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { StoredContext } from '../../../store/collections.js'
import type { JsonObject } from '../../../model/types.js'
import type { FunctionRunResult } from '../../../runtime/types.js'
import { type InstanceAtHand, stateOf } from './instance-at-hand.js'
import { runtimeCall } from './runtime-errors.js'
import type { Change, ProcessInstances } from './service.js'

/** A change of the instance at hand: what it stores beyond the instance it was computed from, its model and environment. */
export type ChangeAtHand = Omit<Change, 'previous' | 'compiled' | 'env' | 'actor'>

/** Commits a change `actor` made of the instance at hand (a compare-and-set against the stored instance). */
export function commitAtHand(
  deps: { instances: Pick<ProcessInstances, 'commit'> },
  { stored, compiled, env }: InstanceAtHand,
  actor: Change['actor'],
  change: ChangeAtHand,
): Promise<StoredContext> {
  return deps.instances.commit({ ...change, previous: stored, compiled, env, actor })
}

/** Runs a function of the instance's model (or app) on its stored state; a failure of the run is its 'function' error. */
export function runFunctionAtHand(
  fail: ErrorFactory<EngineErrorCode>,
  { stored, compiled, env }: InstanceAtHand,
  functionId: string,
  input: JsonObject,
  taskId: string | undefined,
): Promise<FunctionRunResult> {
  return runtimeCall(fail, 'function', () => compiled.runFunction(functionId, { state: stateOf(stored), input, taskId }, env))
}
