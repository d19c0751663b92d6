/**
 * What the services do with a loaded instance (notes, files, headless calls, actions,
 * escalations): run one of its model's functions on the stored state, and commit a change computed
 * from it. The instance, its model version and the request's environment travel together, so each
 * call names only what the operation adds.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { StoredContext } from '../../../store/collections.js'
import type { JsonObject } from '../../../model/types.js'
import type { FunctionRunResult } from '../../../runtime/types.js'
import { type LoadedInstance, stateOf } from './loaded-instance.js'
import { runtimeCall } from './runtime-errors.js'
import type { Change, ProcessInstances } from './service.js'
import { withFields } from '../../../lib/with-fields.js'

/** A change of the loaded instance: what it stores beyond the instance it was computed from, its model and environment. */
export type LoadedInstanceChange = Omit<Change, 'previous' | 'compiled' | 'env' | 'actor'>

/** Commits a change `actor` made of the loaded instance (a compare-and-set against the stored instance). */
export function commitChange(
  deps: { instances: Pick<ProcessInstances, 'commit'> },
  { stored, compiled, env }: LoadedInstance,
  actor: Change['actor'],
  change: LoadedInstanceChange,
): Promise<StoredContext> {
  return deps.instances.commit(withFields(change, { previous: stored, compiled, env, actor }))
}

/** Runs a function of the instance's model (or app) on its stored state; a failure of the run is its 'function' error. */
export function runModelFunction(
  fail: ErrorFactory<EngineErrorCode>,
  { stored, compiled, env }: LoadedInstance,
  functionId: string,
  input: JsonObject,
  taskId: string | undefined,
): Promise<FunctionRunResult> {
  return runtimeCall(fail, 'function', () => compiled.runFunction(functionId, { state: stateOf(stored), input, taskId }, env))
}
