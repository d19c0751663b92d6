/**
 * `POST /file/upload` (multipart: the `fields` JSON part first, then the `fileBody` bytes, streamed
 * to storage as they arrive), `POST /file/download` (the raw bytes) and `POST /file/delete`. The
 * multipart parser is registered for the upload route only, so other routes keep answering 415
 * to multipart bodies.
 */
import { FileUploadFields } from '../../../openapi/generated/schemas.js'
import type { Multipart, MultipartFile } from '@fastify/multipart'
import multipart from '@fastify/multipart'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { deleteFile, downloadFile, uploadFile } from '../../../openapi/generated/engine-routes.js'
import type { File, FileOperationRequest } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'
import { uploadBodyLimit, UPLOAD_FIELDS_BYTES } from '../../../plugins/service-base/server-options.js'
import { FileService, requireInstanceIds, type StagedUpload, type UploadFields } from './service.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../instances/dependencies.js'

export interface FileRoutesOptions {
  maxUploadBytes: number
}

// From the contract's FileUploadFields: every string member, split by whether it is required.
const TEXT_FIELDS = Object.entries(FileUploadFields.properties).flatMap(([name, schema]) =>
  'type' in schema && schema.type === 'string' ? [name] : [],
)
const REQUIRED: readonly string[] = FileUploadFields.required
const REQUIRED_TEXT_FIELDS = TEXT_FIELDS.filter((name) => REQUIRED.includes(name))
const OPTIONAL_TEXT_FIELDS = TEXT_FIELDS.filter((name) => !REQUIRED.includes(name))

/** The `fields` part as UploadFields: missing ids 500 wm3071 first (docs/reference/files.md), then 400 wm4000 naming what is wrong. */
export function parseUploadFields(fail: ErrorFactory<EngineErrorCode>, text: string): UploadFields {
  const invalid = (reason: string, field = 'fields') => fail('wm4000', { args: [reason], parameters: { field } })
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    throw invalid('fields is not valid JSON')
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw invalid('fields must be a JSON object')
  const record = parsed as Record<string, unknown>
  requireInstanceIds(fail, { processInstanceId: textOrUndefined(record.processInstanceId), processId: textOrUndefined(record.processId) })
  const fields: Record<string, unknown> = {}
  for (const name of REQUIRED_TEXT_FIELDS) {
    if (typeof record[name] !== 'string' || record[name] === '')
      throw invalid(`fields.${name} must be a non-empty string`, `fields.${name}`)
    fields[name] = record[name]
  }
  for (const name of OPTIONAL_TEXT_FIELDS) {
    if (record[name] === undefined || record[name] === null) continue
    if (typeof record[name] !== 'string') throw invalid(`fields.${name} must be a string`, `fields.${name}`)
    fields[name] = record[name]
  }
  // Any JSON value (the contract gives `body` no type): it is input for the model's upload function.
  if (record.body !== undefined) fields.body = record.body
  return fields as unknown as UploadFields
}

/**
 * The request's parts; a body the parser cannot read (no boundary in it, cut short: busboy's plain
 * errors) is the client's fault, 400 wm4000, not an engine error. The parser's own limits keep
 * their answers (they carry a status code), and so does anything the loop body throws.
 */
export async function* partsOf(request: FastifyRequest, fail: ErrorFactory<EngineErrorCode>): AsyncGenerator<Multipart> {
  const parts = request.parts()[Symbol.asyncIterator]()
  for (;;) {
    let next: IteratorResult<Multipart>
    try {
      next = await parts.next()
    } catch (error) {
      if (error instanceof Error && !('statusCode' in error)) {
        throw fail('wm4000', { args: [`malformed multipart body: ${error.message}`], parameters: { field: 'body' }, cause: error })
      }
      throw error
    }
    if (next.done) return
    yield next.value
  }
}

/** An id that is not a string counts as missing (500 wm3071), as a missing one does. */
function textOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

async function fileRoutes(fastify: FastifyInstance, options: FileRoutesOptions): Promise<void> {
  const fail: ErrorFactory<EngineErrorCode> = fastify.fail
  const service = new FileService({ ...engineDependencies(fastify), files: fastify.store.files, maxUploadBytes: options.maxUploadBytes })
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()

  /**
   * Reads `fields`, then hands the `fileBody` stream to the service, which stores it; the file joins
   * the instance only once the whole request has been read without error (a second file, a part
   * too many: 413/400 and nothing kept). Nothing is buffered but `fields`.
   */
  async function upload(request: FastifyRequest): Promise<File> {
    let fields: UploadFields | undefined
    let staged: StagedUpload | undefined
    try {
      for await (const part of partsOf(request, fail)) {
        if (part.type === 'field') {
          if (part.fieldname === 'fields') fields = parseUploadFields(fail, String(part.value))
          continue
        }
        if (part.fieldname !== 'fileBody' || staged !== undefined) {
          part.file.resume()
          continue
        }
        staged = await stagePart(request, part, fields)
      }
      if (!fields) throw fail('wm4000', { args: ['the fields part is missing'], parameters: { field: 'fields' } })
      if (!staged) throw fail('wm4000', { args: ['the fileBody part is missing'], parameters: { field: 'fileBody' } })
    } catch (error) {
      // The parser stops here: the rest of the body is read and discarded after the answer
      // (lib/server/unread-body.ts), so that the connection is not left half-read.
      request.raw.unpipe()
      await staged?.discard()
      throw error
    }
    return staged.commit()
  }

  async function stagePart(request: FastifyRequest, part: MultipartFile, fields: UploadFields | undefined): Promise<StagedUpload> {
    try {
      if (!fields) throw fail('wm4000', { args: ['the fields part must come before the fileBody part'], parameters: { field: 'fields' } })
      // The route requires the user header: identity has resolved the actor.
      return await service.stage(
        requireActor(request),
        fields,
        { stream: part.file, contentType: part.mimetype || 'application/octet-stream', truncated: () => part.file.truncated },
        request.headers.additionalheaders,
      )
    } catch (error) {
      // Let the rest of the bytes flow past, so the answer is not stuck behind an unread request.
      part.file.resume()
      throw error
    }
  }

  await fastify.register(async (scoped) => {
    await scoped.register(multipart, {
      limits: { fileSize: options.maxUploadBytes, files: 1, fieldSize: UPLOAD_FIELDS_BYTES, fields: 4, parts: 6 },
      throwFileSizeLimit: false,
    })
    // The limit of what is read and discarded after an early answer (lib/server/unread-body.ts).
    scoped
      .withTypeProvider<TypeBoxTypeProvider>()
      .route({ ...routeFrom(uploadFile), bodyLimit: uploadBodyLimit(options.maxUploadBytes), handler: upload })
  })

  // Untyped on the reply side: the answer is the raw byte stream, which the contract documents as binary.
  fastify.route<{ Body: FileOperationRequest; Headers: { additionalheaders?: string } }>({
    ...routeFrom(downloadFile),
    handler: async (request, reply) => {
      const download = await service.download(requireActor(request), request.body, request.headers.additionalheaders)
      return (
        reply
          .header('content-type', download.contentType)
          .header('content-length', String(download.size))
          .header('content-disposition', contentDisposition(download.fileName))
          // The stored content type is the uploader's word: a browser must not sniff it into HTML or script.
          .header('x-content-type-options', 'nosniff')
          .send(download.stream)
      )
    },
  })
  typed.route({
    ...routeFrom(deleteFile),
    handler: async (request) => service.delete(requireActor(request), request.body, request.headers.additionalheaders),
  })
}

/** `attachment` with the name as plain ASCII (quotes and controls replaced) and, exactly, as RFC 5987 UTF-8. */
export function contentDisposition(fileName: string): string {
  const ascii = fileName.replace(/[^\x20-\x7e]|["\\]/g, '_')
  const encoded = encodeURIComponent(fileName).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`)
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encoded}`
}

export default fp(fileRoutes, {
  name: 'engine-file-routes',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'identity'],
})
