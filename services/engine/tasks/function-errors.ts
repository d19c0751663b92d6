/**
 * Turns a failure of a function run outside an action (task functions, external execute, file
 * functions, getUser) into the catalogue error the endpoint answers. Nothing was stored when this
 * runs: the runtime never mutates the state it was given and the engine writes only afterwards.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory, ServiceError } from '../../../plugins/errors/service-error.js'
import { isServiceError } from '../../../plugins/errors/service-error.js'
import { RuntimeError } from '../runtime/types.js'

export function functionFailure(fail: ErrorFactory<EngineErrorCode>, error: unknown): ServiceError {
  if (isServiceError(error)) return error
  if (!(error instanceof RuntimeError)) return fail('wm3055', { args: ['unexpected runtime error'], cause: error })
  const parameters: Record<string, string> = {}
  if (error.details.code) parameters.code = error.details.code
  if (error.details.path) parameters.path = error.details.path
  const details = { args: [error.message], parameters, cause: error }
  if (error.kind === 'business') return fail('wm3053', details)
  // Input that fails the schema is the caller's fault; output that fails it is the function's.
  if (error.kind === 'validation' && error.details.path?.endsWith('.input')) return fail('wm3056', details)
  if (error.kind === 'notFound' && error.details.target === 'task') return fail('wm3005', details)
  if (error.kind === 'notFound' && error.details.target === 'function' && !error.details.path) return fail('wm3054', details)
  if (error.kind === 'conflict' && error.details.target === 'task') return fail('wm3041', details)
  return fail('wm3055', details)
}

/** Runs a function, answering its failure as functionFailure says. */
export async function functionCall<T>(fail: ErrorFactory<EngineErrorCode>, call: () => Promise<T>): Promise<T> {
  try {
    return await call()
  } catch (error) {
    throw functionFailure(fail, error)
  }
}
