/**
 * Turns a failure of the runtime into the catalogue error the endpoint answers. Nothing was stored
 * when this runs (the runtime never mutates the state it was given, and the engine writes only
 * after it returned), so every answer here is also a rollback.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory, ServiceError } from '../../../plugins/errors/service-error.js'
import { isServiceError } from '../../../plugins/errors/service-error.js'
import { RuntimeError } from '../runtime/types.js'

/**
 * What the runtime was doing: starting or advancing a process (complete, save's userTaskActivity,
 * retry), or running a function action (`/action/function`, whose failures SPEC.md answers with 401).
 */
export type RuntimePurpose = 'advance' | 'actionFunction'

function parametersOf(error: RuntimeError): Record<string, string> {
  const parameters: Record<string, string> = {}
  if (error.details.code) parameters.code = error.details.code
  if (error.details.path) parameters.path = error.details.path
  if (error.details.target) parameters.target = error.details.target
  return parameters
}

export function runtimeFailure(fail: ErrorFactory<EngineErrorCode>, error: unknown, purpose: RuntimePurpose): ServiceError {
  if (isServiceError(error)) return error
  if (!(error instanceof RuntimeError)) {
    // Not the runtime's own report: a defect, whose text stays in the log (the cause), not the answer.
    return fail(purpose === 'actionFunction' ? 'wm3052' : 'wm3050', { args: ['unexpected runtime error'], cause: error })
  }
  const details = { args: [error.message], parameters: parametersOf(error), cause: error }
  const target = error.details.target
  if (error.kind === 'notFound' && target === 'task') return fail('wm3005', details)
  if (error.kind === 'conflict' && target !== 'action') return fail('wm3041', details)
  if (purpose === 'actionFunction') {
    return fail(error.kind === 'notFound' && (target === 'action' || target === 'function') ? 'wm3051' : 'wm3052', details)
  }
  if (error.kind === 'conflict' || (error.kind === 'notFound' && target === 'action')) return fail('wm3110', details)
  if (error.kind === 'notFound' && target === 'thread') return fail('wm3080', details)
  if (error.kind === 'business') return fail('wm3053', details)
  return fail('wm3050', details)
}

/** Runs a runtime call, answering its failure as the catalogue error of `purpose`. */
export async function runtimeCall<T>(fail: ErrorFactory<EngineErrorCode>, purpose: RuntimePurpose, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw runtimeFailure(fail, error, purpose)
  }
}
