/**
 * What the client gets for an engine answer (DESIGN.md §4): the engine answers raw resources and
 * ICustomError records; the gateway wraps both in the envelope, keeping the HTTP status. Success
 * answers of raw routes (file download bytes) and non-JSON success answers pass through untouched.
 */
import { type CustomErrorRecord, type Envelope, errorEnvelope, successEnvelope } from '../../../plugins/errors/envelope.js'

export function isJsonContentType(contentType: string | string[] | number | undefined): boolean {
  if (typeof contentType !== 'string') return false
  const mediaType = contentType.split(';', 1)[0]!.trim().toLowerCase()
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
  if (statusCode < 400) {
    if (body.trim() === '') return successEnvelope(null)
    return successEnvelope(parseJson(body, statusCode))
  }
  if (!isJsonContentType(contentType)) throw new InvalidEngineAnswer(`${statusCode} with ${String(contentType ?? 'no content type')} instead of an error record`)
  const record = parseJson(body, statusCode)
  if (!isCustomErrorRecord(record)) throw new InvalidEngineAnswer(`${statusCode} without an error record`)
  const { stack, ...withoutStack } = record
  return errorEnvelope(exposeStack && stack !== undefined ? { ...withoutStack, stack } : withoutStack)
}

function parseJson(body: string, statusCode: number): unknown {
  try {
    return JSON.parse(body) as unknown
  } catch {
    throw new InvalidEngineAnswer(`${statusCode} with a body that is not JSON`)
  }
}
