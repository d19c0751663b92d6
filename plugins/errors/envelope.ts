/**
 * The response envelope `{ status, data, error? }` (docs/reference/http.md#envelope) and the error
 * record (ICustomError). One mapping from HTTP status to envelope status serves every place that
 * wraps an answer: the gateway's own routes, its error handler and the proxy.
 */
export type EnvelopeStatus = 'success' | 'customerror' | 'permissionError' | 'error'

export interface CustomErrorRecord {
  statusCode: number
  type: 'business' | 'technical'
  category: 'warning' | 'error'
  message: string
  code: string
  summary?: string
  parameters?: Record<string, string>
  detail?: string
  stack?: string
}

export interface Envelope<T = unknown> {
  status: EnvelopeStatus
  data: T | string | null
  error?: { message: string; title?: string; code: string; parameters?: Record<string, string> }
}

/** 2xx success; 401/403 permissionError; other 4xx customerror; 5xx error. */
export function envelopeStatus(httpStatus: number): EnvelopeStatus {
  if (httpStatus < 400) return 'success'
  if (httpStatus === 401 || httpStatus === 403) return 'permissionError'
  if (httpStatus < 500) return 'customerror'
  return 'error'
}

export function successEnvelope<T>(data: T): Envelope<T> {
  return { status: 'success', data }
}

/** `data` carries the stack only when the record has one (development), else null. */
export function errorEnvelope(record: CustomErrorRecord): Envelope<never> {
  const error: NonNullable<Envelope['error']> = { message: record.message, code: record.code }
  if (record.summary) error.title = record.summary
  if (record.parameters) error.parameters = record.parameters
  return { status: envelopeStatus(record.statusCode), data: record.stack ?? null, error }
}
