/**
 * What the client gets for an engine answer (docs/reference/http.md#envelope): the engine answers raw resources and
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
export function envelopeOfEngineAnswer(
  statusCode: number,
  contentType: string | string[] | number | undefined,
  body: string,
  exposeStack: boolean,
): Envelope {
  if (statusCode < 400) return successEnvelope(body.trim() === '' ? null : parseJson(body, statusCode))
  if (!isJsonContentType(contentType))
    throw new InvalidEngineAnswer(`${statusCode} with ${String(contentType ?? 'no content type')} instead of an error record`)
  const record = parseJson(body, statusCode)
  if (!isCustomErrorRecord(record)) throw new InvalidEngineAnswer(`${statusCode} without an error record`)
  const { stack, ...withoutStack } = record
  return errorEnvelope(exposeStack && stack !== undefined ? { ...withoutStack, stack } : withoutStack)
}

/** `{"status":"success","data":` and `}`, taken from the envelope itself so that they cannot drift apart. */
const SUCCESS_TEXT = JSON.stringify(successEnvelope(null))
const SUCCESS_PREFIX = Buffer.from(SUCCESS_TEXT.slice(0, -'null}'.length))
const SUCCESS_SUFFIX = Buffer.from('}')

const OPENERS_TO_CLOSERS: Readonly<Record<number, number>> = { 0x7b: 0x7d, 0x5b: 0x5d } // { }  [ ]

function isJsonWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09
}

/**
 * An object or array by its first and last (non-blank) bytes. The engine is our own service and
 * writes its JSON answers with Fastify's serializer, so a JSON content type already means a JSON
 * body; what this still catches is the engine answer that is not — an HTML or text page, a cut-off
 * body — at a constant cost instead of a parse of every answer. Anything else (a JSON string, number
 * or literal, or garbage) is parsed.
 */
function delimitsObjectOrArray(body: Uint8Array): boolean {
  let first = 0
  let last = body.length - 1
  while (first <= last && isJsonWhitespace(body[first]!)) first++
  while (last > first && isJsonWhitespace(body[last]!)) last--
  return first < last && OPENERS_TO_CLOSERS[body[first]!] === body[last]
}

function isBlank(body: Uint8Array): boolean {
  for (const byte of body) if (!isJsonWhitespace(byte)) return false
  return true
}

function utf8(body: Uint8Array): string {
  return Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')
}

/**
 * {@link envelopeOfEngineAnswer} as the bytes the client gets. A success's body is checked to be
 * JSON (else 502 fm5021, see delimitsObjectOrArray) and then framed as the bytes it came in rather
 * than decoded, parsed, serialised and encoded again: the same JSON value at a fraction of the CPU,
 * on the proxy's most frequent answer.
 */
export function envelopeBytesOfEngineAnswer(
  statusCode: number,
  contentType: string | string[] | number | undefined,
  body: Uint8Array,
  exposeStack: boolean,
): Buffer {
  if (statusCode >= 400 || isBlank(body))
    return Buffer.from(JSON.stringify(envelopeOfEngineAnswer(statusCode, contentType, utf8(body), exposeStack)))
  if (!delimitsObjectOrArray(body)) parseJson(utf8(body), statusCode)
  return Buffer.concat([SUCCESS_PREFIX, body, SUCCESS_SUFFIX])
}

function parseJson(body: string, statusCode: number): unknown {
  try {
    return JSON.parse(body) as unknown
  } catch {
    throw new InvalidEngineAnswer(`${statusCode} with a body that is not JSON`)
  }
}
