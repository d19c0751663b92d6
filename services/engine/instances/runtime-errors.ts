/**
 * Turns a failure of the runtime into the catalogue error the endpoint answers. Nothing was stored
 * when this runs (the runtime never mutates the state it was given, and the engine writes only
 * after it returned), so every answer here is also a rollback.
 */
import { type EngineErrorCode, engineErrorCatalogue } from '../../../openapi/generated/errors.js'
import type { ErrorFactory, ServiceError } from '../../../plugins/errors/service-error.js'
import { isServiceError } from '../../../plugins/errors/service-error.js'
import { RuntimeError } from '../../../runtime/types.js'

/**
 * What the runtime was doing: starting or advancing a process (complete, save's userTaskActivity,
 * retry), running a function action (`/action/function`, whose failures answer 401, docs/reference/http.md#unusual-statuses),
 * or running a function outside an action (task functions, external execute, file functions,
 * getUser), whose failures have codes of their own.
 */
export type RuntimePurpose = 'advance' | 'actionFunction' | 'function'

/** The answer's parameters; function runs outside an action have always answered without `target`. */
function parametersOf(error: RuntimeError, purpose: RuntimePurpose): Record<string, string> {
  const parameters: Record<string, string> = {}
  if (error.details.code) parameters.code = error.details.code
  if (error.details.path) parameters.path = error.details.path
  if (error.details.target && purpose !== 'function') parameters.target = error.details.target
  return parameters
}

/** The code of a failure that is not the runtime's own report (a defect), by purpose. */
const UNEXPECTED = { advance: 'wm3050', actionFunction: 'wm3052', function: 'wm3055' } as const satisfies Record<
  RuntimePurpose,
  EngineErrorCode
>

type FailureDetails = { args: string[]; parameters: Record<string, string>; cause: RuntimeError }

/** A function run outside an action: input that fails its schema is the caller's fault, output that fails it the function's. */
function functionRunFailure(fail: ErrorFactory<EngineErrorCode>, error: RuntimeError, details: FailureDetails): ServiceError {
  const { target, path } = error.details
  if (error.kind === 'business') return fail('wm3053', details)
  if (error.kind === 'validation' && path?.endsWith('.input')) return fail('wm3056', details)
  if (error.kind === 'notFound' && target === 'task') return fail('wm3005', details)
  if (error.kind === 'notFound' && target === 'function' && !path) return fail('wm3054', details)
  if (error.kind === 'conflict' && target === 'task') return fail('wm3041', details)
  return fail('wm3055', details)
}

function isEngineErrorCode(code: string): code is EngineErrorCode {
  return Object.hasOwn(engineErrorCatalogue, code)
}

/** A request budget that ran out: its own catalogue code, naming the setting that bounds it, whatever the purpose. */
function limitFailure(fail: ErrorFactory<EngineErrorCode>, error: RuntimeError): ServiceError {
  const { code, limit } = error.details
  if (code === undefined || !isEngineErrorCode(code)) return fail('wm3055', { args: [error.message], cause: error })
  return fail(code, { args: [limit ?? 'a limit', error.message], parameters: limit === undefined ? {} : { limit }, cause: error })
}

export function runtimeFailure(fail: ErrorFactory<EngineErrorCode>, error: unknown, purpose: RuntimePurpose): ServiceError {
  if (isServiceError(error)) return error
  if (!(error instanceof RuntimeError)) {
    // Not the runtime's own report: a defect, whose text stays in the log (the cause), not the answer.
    return fail(UNEXPECTED[purpose], { args: ['unexpected runtime error'], cause: error })
  }
  if (error.kind === 'limit') return limitFailure(fail, error)
  const details = { args: [error.message], parameters: parametersOf(error, purpose), cause: error }
  const target = error.details.target
  if (purpose === 'function') return functionRunFailure(fail, error, details)
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
