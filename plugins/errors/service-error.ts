/**
 * Errors with stable, prefixed codes (`wm…` engine, `fm…` gateway), built with @fastify/error from a
 * catalogue generated out of the OpenAPI documents' `x-error-catalogue`.
 */
import createError, { type FastifyError } from '@fastify/error'

export interface ErrorSpec {
  readonly status: number
  readonly type: 'business' | 'technical'
  readonly category: 'warning' | 'error'
  /** May hold `%s` placeholders, filled from `args`. */
  readonly message: string
}

export type ErrorCatalogue = Readonly<Record<string, ErrorSpec>>

export interface ErrorDetails {
  /** Values for the message's `%s` placeholders. */
  args?: unknown[]
  /** Extra context, e.g. `{ field: 'processId' }`. */
  parameters?: Record<string, string>
  /** Extended details, e.g. process identifiers. */
  detail?: string
  /** Short user-facing title. */
  summary?: string
  cause?: unknown
}

export interface ServiceError extends FastifyError {
  statusCode: number
  type: ErrorSpec['type']
  category: ErrorSpec['category']
  parameters?: Record<string, string>
  detail?: string
  summary?: string
}

export function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === 'string' &&
    typeof (error as Partial<ServiceError>).type === 'string' &&
    typeof (error as Partial<ServiceError>).statusCode === 'number'
  )
}

export type ErrorFactory<Code extends string> = (code: Code, details?: ErrorDetails) => ServiceError

/** One constructor per catalogue entry, built once; the factory fills in the record's extra fields. */
export function errorFactory<Catalogue extends ErrorCatalogue>(catalogue: Catalogue): ErrorFactory<Extract<keyof Catalogue, string>> {
  const constructors = new Map(
    Object.entries(catalogue).map(([code, spec]) => [code, createError<unknown[]>(code, spec.message, spec.status)] as const),
  )
  return (code, details = {}) => {
    const spec = catalogue[code]
    const Constructor = constructors.get(code)
    if (!spec || !Constructor) throw new Error(`Unknown error code ${code}`)
    const error = new Constructor(...(details.args ?? [])) as ServiceError
    error.code = code // @fastify/error upper-cases codes; ours are stable as the catalogue spells them
    error.statusCode = spec.status
    error.type = spec.type
    error.category = spec.category
    if (details.parameters) error.parameters = details.parameters
    if (details.detail) error.detail = details.detail
    if (details.summary) error.summary = details.summary
    if (details.cause !== undefined) error.cause = details.cause
    return error
  }
}
