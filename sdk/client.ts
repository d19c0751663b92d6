/**
 * The workflow service's TypeScript client for Node.js: `WorkflowFetchClient` (fetch-client.ts: the
 * calls, the tenant fields, the envelope) plus files streamed as Node.js streams. Published as
 * `@workflow-service/sdk` (docs/sdk.md).
 *
 *   const client = new WorkflowClient({ baseUrl: 'http://127.0.0.1:3000', organizationId: 'acme', appId: 'hr', userId })
 *   const signedIn = new WorkflowClient({ baseUrl, organizationId: 'acme', appId: 'hr', token: () => identityProvider.accessToken() })
 *   const session = await client.post('/context', { body: { processId: 'leave-request', input: { days: 3 } } })
 *   const status = await client.get('/process/{processInstanceId}', { params: { path: { processInstanceId } } })
 */
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import {
  type ExtraHeaders,
  fileNameOf,
  type Schemas,
  unwrap,
  type UploadFields,
  WorkflowApiError,
  WorkflowFetchClient,
  type WithoutTenant,
} from './fetch-client.js'

export {
  type CallInit,
  type components,
  type EnvelopedPath,
  type EnvelopeStatus,
  type ExtraHeaders,
  type paths,
  type ResponseData,
  type Schemas,
  type TokenSource,
  type UploadFields,
  WorkflowApiError,
  type WorkflowClientOptions,
  WorkflowFetchClient,
} from './fetch-client.js'

export type UploadSource = Uint8Array | Blob | Readable

export interface DownloadedFile {
  /** The file's bytes, as they arrive. */
  stream: Readable
  contentType: string | undefined
  /** From `content-disposition`, when the answer names the file. */
  fileName: string | undefined
  /** From `content-length`, when known. */
  size: number | undefined
}

export class WorkflowClient extends WorkflowFetchClient {
  /**
   * `POST /file/upload`: the file goes out as it is read (a stream is never held whole), in the
   * multipart form the gateway streams on to the engine. Resolves to the file record.
   */
  async uploadFile(
    fields: UploadFields,
    file: UploadSource,
    options: { contentType?: string; headers?: ExtraHeaders } = {},
  ): Promise<Schemas['File']> {
    const boundary = `workflow-sdk-${randomUUID()}`
    const body = ReadableStream.from(
      multipart(boundary, JSON.stringify(this.withTenant(fields)), fields.fileName, options.contentType ?? contentTypeOf(file), file),
    )
    const result = await this.request('post', '/file/upload', {
      params: { header: await this.headers(options.headers) },
      body,
      bodySerializer: (stream) => stream,
      headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
      duplex: 'half',
    })
    return unwrap(result) as Schemas['File']
  }

  /** `POST /file/download`: the bytes as a stream, read as they arrive. */
  async downloadFile(
    body: WithoutTenant<Schemas['FileOperationRequest']>,
    options: { headers?: ExtraHeaders } = {},
  ): Promise<DownloadedFile> {
    const result = await this.request('post', '/file/download', {
      params: { header: await this.headers(options.headers) },
      body: this.withTenant(body),
      parseAs: 'stream',
    })
    if (!result.response.ok) throw WorkflowApiError.fromAnswer(result.response.status, result.error)
    const { headers } = result.response
    const length = headers.get('content-length')
    return {
      stream: result.data ? Readable.fromWeb(result.data as WebReadableStream<Uint8Array>) : Readable.from([]),
      contentType: headers.get('content-type') ?? undefined,
      fileName: fileNameOf(headers.get('content-disposition')),
      size: length === null ? undefined : Number(length),
    }
  }
}

function contentTypeOf(file: UploadSource): string {
  return file instanceof Blob && file.type !== '' ? file.type : 'application/octet-stream'
}

/** Quotes a file name for a multipart header (RFC 7578, section 4.2: percent-encode what breaks the quoting). */
function quoted(fileName: string): string {
  return `"${fileName.replace(/["\r\n%]/g, (character) => encodeURIComponent(character))}"`
}

/** The multipart body, part by part: `fields` (JSON text), then `fileBody` streamed from its source. */
async function* multipart(
  boundary: string,
  fieldsJson: string,
  fileName: string,
  contentType: string,
  file: UploadSource,
): AsyncGenerator<Uint8Array> {
  const encoder = new TextEncoder()
  // The JSON text goes as a plain field (no part content type), which every multipart parser reads as a string.
  yield encoder.encode(`--${boundary}\r\nContent-Disposition: form-data; name="fields"\r\n\r\n${fieldsJson}\r\n`)
  yield encoder.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="fileBody"; filename=${quoted(fileName)}\r\nContent-Type: ` +
      `${contentType}\r\n\r\n`,
  )
  if (file instanceof Uint8Array) yield file
  else {
    const chunks: AsyncIterable<unknown> = file instanceof Blob ? (file.stream() as unknown as AsyncIterable<Uint8Array>) : file
    for await (const chunk of chunks) yield typeof chunk === 'string' ? encoder.encode(chunk) : (chunk as Uint8Array)
  }
  yield encoder.encode(`\r\n--${boundary}--\r\n`)
}
