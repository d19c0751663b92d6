/**
 * The workflow service's TypeScript client: a thin layer over openapi-fetch and the types generated
 * from the gateway document (sdk/generated/gateway.ts). It fills in what every call carries —
 * `organizationId` and `appId` in every JSON body (and as query parameters on GET and DELETE), the
 * selected user in the `user` header — and turns the envelope into the answer's data, or into a
 * WorkflowApiError. Published as `@workflow-service/sdk` (docs/sdk.md).
 *
 *   const client = new WorkflowClient({ baseUrl: 'http://127.0.0.1:3000', organizationId: 'acme', appId: 'hr', userId })
 *   const signedIn = new WorkflowClient({ baseUrl, organizationId: 'acme', appId: 'hr', token: () => identityProvider.accessToken() })
 *   const session = await client.post('/context', { body: { processId: 'leave-request', input: { days: 3 } } })
 *   const status = await client.get('/process/{processInstanceId}', { params: { path: { processInstanceId } } })
 */
import { randomUUID } from 'node:crypto'
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'
import createClient from 'openapi-fetch'
import type { components, paths } from './generated/gateway.js'

export type { components, paths }
export type Schemas = components['schemas']

type HttpMethod = 'get' | 'post' | 'delete'
type TenantField = 'organizationId' | 'appId'

/** The operation behind a path and method (undefined where the path has no such method). */
type Operation<Path extends keyof paths, Method extends HttpMethod> = paths[Path][Method]

type SuccessContent<Op> = Op extends { responses: { 200: { content: { 'application/json': infer Content } } } } ? Content : never

/** Paths whose operation for `Method` answers JSON in the envelope (raw answers have their own methods). */
export type EnvelopedPath<Method extends HttpMethod> = {
  [Path in keyof paths]: SuccessContent<Operation<Path, Method>> extends { status: 'success' } ? Path : never
}[keyof paths]

/** What a successful call resolves to: the envelope's `data`. */
export type ResponseData<Path extends keyof paths, Method extends HttpMethod> =
  SuccessContent<Operation<Path, Method>> extends { data: infer Data } ? Data : never

type Parameters<Op> = Op extends { parameters: infer Params } ? Params : never
type JsonBody<Op> = Op extends { requestBody?: infer RequestBody }
  ? [NonNullable<RequestBody>] extends [never]
    ? never
    : NonNullable<RequestBody> extends { content: { 'application/json': infer Body } }
      ? Body
      : never
  : never

/** The caller may leave out what the client injects. */
type WithoutTenant<Body> = Omit<Body, TenantField> & Partial<Record<TenantField, string>>

/** Headers a caller may add; `user` is the selected user's. */
export interface ExtraHeaders {
  lplogclientid?: string
  additionalheaders?: string
  /** `Bearer <ADMIN_TOKEN>` for the gateway's admin endpoints (users, models, cache, notify) when ADMIN_TOKEN is set. */
  authorization?: string
}

type PathParams<Op> = Parameters<Op> extends { path: infer Path extends object } ? { path: Path } : { path?: never }
type QueryParams<Op> =
  Parameters<Op> extends { query?: infer Query }
    ? [NonNullable<Query>] extends [never]
      ? { query?: never }
      : { query?: WithoutTenant<NonNullable<Query>> }
    : { query?: never }
type BodyInit<Op> = [JsonBody<Op>] extends [never] ? { body?: never } : { body: WithoutTenant<JsonBody<Op>> }

/** The second argument of `get`, `post` and `delete`: path and query parameters, the JSON body, extra headers. */
export type CallInit<Path extends keyof paths, Method extends HttpMethod> = {
  params: PathParams<Operation<Path, Method>> & QueryParams<Operation<Path, Method>>
  headers?: ExtraHeaders
  /** Aborts the call (a long poll that is no longer wanted). */
  signal?: AbortSignal
} & BodyInit<Operation<Path, Method>>

/** `init` may be left out when nothing in it is required. */
type InitArgument<Init> = object extends Init ? [init?: Init] : [init: Init]
type Optional<Init extends { params: object }> = Omit<Init, 'params'> &
  (object extends Init['params'] ? { params?: Init['params'] } : { params: Init['params'] })

export type EnvelopeStatus = Schemas['ErrorEnvelope']['status']

/** A failed call: the HTTP status and the envelope's status, code and message. */
export class WorkflowApiError extends Error {
  override readonly name = 'WorkflowApiError'

  constructor(
    /** The HTTP status of the answer. */
    readonly httpStatus: number,
    /** `customerror` (business rule, validation, not found), `permissionError` (401/403) or `error` (5xx). */
    readonly status: EnvelopeStatus,
    /** The stable catalogue code: `fm…` gateway, `wm…` engine. */
    readonly code: string,
    message: string,
    readonly details: { title?: string; parameters?: Record<string, string>; serverStack?: string } = {},
  ) {
    super(message)
  }

  /** The error of a non-2xx answer; one that is not the gateway's envelope (a proxy's page) is said so. */
  static fromAnswer(httpStatus: number, body: unknown): WorkflowApiError {
    if (isErrorEnvelope(body)) {
      const { error } = body
      return new WorkflowApiError(httpStatus, body.status, error.code, error.message, {
        ...(error.title === undefined ? {} : { title: error.title }),
        ...(error.parameters === undefined ? {} : { parameters: error.parameters }),
        ...(typeof body.data === 'string' ? { serverStack: body.data } : {}),
      })
    }
    return new WorkflowApiError(
      httpStatus,
      httpStatus < 500 && httpStatus !== 401 && httpStatus !== 403 ? 'customerror' : httpStatus >= 500 ? 'error' : 'permissionError',
      'unexpected-answer',
      `HTTP ${httpStatus} without the gateway's error envelope`,
    )
  }
}

function isErrorEnvelope(body: unknown): body is Schemas['ErrorEnvelope'] {
  if (typeof body !== 'object' || body === null) return false
  const { status, error } = body as { status?: unknown; error?: { code?: unknown; message?: unknown } }
  return (
    (status === 'customerror' || status === 'permissionError' || status === 'error') &&
    typeof error?.code === 'string' &&
    typeof error.message === 'string'
  )
}

/**
 * The `fields` part of `/file/upload` (gateway document: FileUploadFields); the client asks for the
 * instance ids the contract leaves to the handler's check, so a missing one is a type error here.
 */
export type UploadFields = Schemas['FileUploadFields'] & Required<Pick<Schemas['FileUploadFields'], 'processId' | 'processInstanceId'>>

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

export interface WorkflowClientOptions {
  /** The gateway, e.g. `http://127.0.0.1:3000`. */
  baseUrl: string
  organizationId: string
  appId: string
  /** The selected user (the `user` header); `selectUser` changes it. */
  userId?: string
  /** Sent as `lplogclientid` on every request, so the service's log lines of these calls carry `[CI: <id>]`. */
  logClientId?: string
  /** Another fetch (tests, instrumentation); the global one by default. */
  fetch?: typeof fetch
  /**
   * The bearer token of AUTH_MODE=jwt, sent as `authorization: Bearer <token>` on every request: a
   * string, or a function asked before each request (so an expiring token can be renewed). A
   * caller's own `authorization` header (ADMIN_TOKEN on admin endpoints) wins.
   */
  token?: TokenSource
}

export type TokenSource = string | (() => string | Promise<string>)

/** openapi-fetch's request, as this class calls it: path and method are only known generically here. */
type UntypedRequest = (
  method: HttpMethod,
  path: string,
  init: {
    params: { path?: object; query?: object; header?: Record<string, string | undefined> }
    body?: unknown
    bodySerializer?: (body: unknown) => unknown
    headers?: Record<string, string>
    parseAs?: 'json' | 'stream'
    duplex?: 'half'
  },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>

export class WorkflowClient {
  readonly organizationId: string
  readonly appId: string
  private selectedUser: string | undefined
  private readonly logClientId: string | undefined
  private token: TokenSource | undefined
  private readonly request: UntypedRequest

  constructor(options: WorkflowClientOptions) {
    this.organizationId = options.organizationId
    this.appId = options.appId
    this.selectedUser = options.userId
    this.logClientId = options.logClientId
    this.token = options.token
    const client = createClient<paths>({ baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}) })
    this.request = client.request as unknown as UntypedRequest
  }

  /** The user whose id goes in the `user` header. */
  get userId(): string | undefined {
    return this.selectedUser
  }

  /** Acts as another user from now on (or as nobody: no `user` header). */
  selectUser(userId: string | undefined): this {
    this.selectedUser = userId
    return this
  }

  /** Sends another bearer token from now on (or none). */
  useToken(token: TokenSource | undefined): this {
    this.token = token
    return this
  }

  get<Path extends EnvelopedPath<'get'>>(
    path: Path,
    ...init: InitArgument<Optional<CallInit<Path, 'get'>>>
  ): Promise<ResponseData<Path, 'get'>> {
    return this.call('get', path, init[0]) as Promise<ResponseData<Path, 'get'>>
  }

  post<Path extends EnvelopedPath<'post'>>(
    path: Path,
    ...init: InitArgument<Optional<CallInit<Path, 'post'>>>
  ): Promise<ResponseData<Path, 'post'>> {
    return this.call('post', path, init[0]) as Promise<ResponseData<Path, 'post'>>
  }

  delete<Path extends EnvelopedPath<'delete'>>(
    path: Path,
    ...init: InitArgument<Optional<CallInit<Path, 'delete'>>>
  ): Promise<ResponseData<Path, 'delete'>> {
    return this.call('delete', path, init[0]) as Promise<ResponseData<Path, 'delete'>>
  }

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

  private async call(
    method: HttpMethod,
    path: string,
    init: { params?: { path?: object; query?: object }; body?: object; headers?: ExtraHeaders; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const tenantQuery = method === 'post' ? {} : { organizationId: this.organizationId, appId: this.appId }
    const result = await this.request(method, path, {
      params: { path: init.params?.path ?? {}, query: { ...tenantQuery, ...init.params?.query }, header: await this.headers(init.headers) },
      ...(init.body === undefined ? {} : { body: this.withTenant(init.body) }),
      ...(init.signal === undefined ? {} : { signal: init.signal }),
    })
    return unwrap(result)
  }

  /** Injected values fill in what the caller left out; a caller's own value wins. */
  private withTenant<Body extends object>(body: Body): Body & Record<TenantField, string> {
    return { organizationId: this.organizationId, appId: this.appId, ...body }
  }

  private async headers(extra: ExtraHeaders = {}): Promise<Record<string, string | undefined>> {
    const token = typeof this.token === 'function' ? await this.token() : this.token
    return {
      ...(this.logClientId === undefined ? {} : { lplogclientid: this.logClientId }),
      ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
      ...extra,
      ...(this.selectedUser === undefined ? {} : { user: this.selectedUser }),
    }
  }
}

/** The envelope's data of a 2xx answer, else the WorkflowApiError it carries. */
function unwrap(result: { data?: unknown; error?: unknown; response: Response }): unknown {
  if (!result.response.ok) throw WorkflowApiError.fromAnswer(result.response.status, result.error)
  const envelope = result.data as { status?: unknown; data?: unknown } | undefined
  if (envelope?.status !== 'success') throw WorkflowApiError.fromAnswer(result.response.status, envelope)
  return envelope.data
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

/** `attachment; filename="scan.pdf"` -> `scan.pdf` (also the RFC 5987 `filename*=UTF-8''…` form). */
function fileNameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition)
  if (extended) return decodeURIComponent(extended[1]!)
  const plain = /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/i.exec(disposition)
  return plain ? (plain[1] ?? plain[2]!.trim()) : undefined
}
