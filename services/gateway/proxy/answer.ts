/**
 * What the client gets for an engine answer (DESIGN.md §4): the engine answers raw resources and
 * ICustomError records; the gateway wraps both in the envelope, keeping the HTTP status. Success
 * answers of raw routes (file download bytes) and non-JSON success answers pass through untouched.
 */
import { type CustomErrorRecord, type Envelope, errorEnvelope, successEnvelope } from '../../../plugins/errors/envelope.js'

export function isJsonContentType(contentType: string | string[] | number | undefined): boolean {
  if (typeof contentType !== 'string') return false
  const parametersAt = contentType.indexOf(';')
  const mediaType = (parametersAt === -1 ? contentType : contentType.slice(0, parametersAt)).trim().toLowerCase()
  return mediaType === 'application/json' || mediaType.endsWith('+json')
}

/** A success streamed as the engine sent it, or anything else read and put in the envelope. */
export function streamsUntouched(statusCode: number, contentType: string | string[] | number | undefined, rawRoute: boolean): boolean {
  return statusCode < 400 && (rawRoute || !isJsonContentType(contentType))
}

function isCustomErrorRecord(value: unknown): value is CustomErrorRecord {
  if (typeof value !== 'object' || value === null) return false
  const record = value as Partial<Record<keyof CustomErrorRecord, unknown>>
  return typeof record.statusCode === 'number' && typeof record.code === 'string' && typeof record.message === 'string'
}

/** Thrown when the engine's answer cannot be put in the envelope; the proxy answers 502 fm5021. */
export class InvalidEngineAnswer extends Error {
  override readonly name = 'InvalidEngineAnswer'
}

/**
 * The envelope for an engine answer that is not streamed: the resource of a success (an empty body
 * is `data: null`), or the error record of a failure, its stack kept only in development.
 */
export function envelopeOfEngineAnswer(statusCode: number, contentType: string | string[] | number | undefined, body: string, exposeStack: boolean): Envelope {
  if (statusCode < 400) return successEnvelope(body.trim() === '' ? null : parseJson(body, statusCode))
  if (!isJsonContentType(contentType)) throw new InvalidEngineAnswer(`${statusCode} with ${String(contentType ?? 'no content type')} instead of an error record`)
  const record = parseJson(body, statusCode)
  if (!isCustomErrorRecord(record)) throw new InvalidEngineAnswer(`${statusCode} without an error record`)
  const { stack, ...withoutStack } = record
  return errorEnvelope(exposeStack && stack !== undefined ? { ...withoutStack, stack } : withoutStack)
}

/** `{"status":"success","data":`, taken from the envelope itself so that the two cannot drift apart. */
const SUCCESS_PREFIX = JSON.stringify(successEnvelope(null)).slice(0, -'null}'.length)

/**
 * {@link envelopeOfEngineAnswer} as the JSON text the client gets. A success's body is checked to be
 * JSON (else 502 fm5021) and then framed as it came rather than parsed into objects and serialised
 * again: the same JSON value at a fraction of the CPU, on the proxy's most frequent answer.
 */
export function envelopeJsonOfEngineAnswer(statusCode: number, contentType: string | string[] | number | undefined, body: string, exposeStack: boolean): string {
  if (statusCode >= 400 || body.trim() === '') return JSON.stringify(envelopeOfEngineAnswer(statusCode, contentType, body, exposeStack))
  parseJson(body, statusCode)
  return `${SUCCESS_PREFIX}${body}}`
}

function parseJson(body: string, statusCode: number): unknown {
  try {
    return JSON.parse(body) as unknown
  } catch {
    throw new InvalidEngineAnswer(`${statusCode} with a body that is not JSON`)
  }
}
