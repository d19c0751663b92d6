/**
 * The part of the SDK that runs wherever `fetch` does (Node.js and browsers, the console among them):
 * a thin layer over openapi-fetch and the types generated from the gateway document
 * (sdk/generated/gateway.ts). It fills in what every call carries — `organizationId` and `appId` in
 * every JSON body (and as query parameters on GET and DELETE), the selected user in the `user`
 * header, or a bearer token — and turns the envelope into the answer's data, or into a
 * WorkflowApiError. `WorkflowClient` (client.ts) adds Node.js streams for files; this file imports
 * nothing of Node.js, so a bundler can take it into a web page.
 *
 *   const client = new WorkflowFetchClient({ baseUrl: location.origin, organizationId: 'acme', appId: 'hr', token })
 *   const users = await client.get('/user/listWorkflowUsers')
 */
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
export type WithoutTenant<Body> = Omit<Body, TenantField> & Partial<Record<TenantField, string>>

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
export type UntypedRequest = (
  method: HttpMethod,
  path: string,
  init: {
    params: { path?: object; query?: object; header?: Record<string, string | undefined> }
    body?: unknown
    bodySerializer?: (body: unknown) => unknown
    headers?: Record<string, string>
    parseAs?: 'json' | 'stream' | 'blob' | 'text'
    duplex?: 'half'
  },
) => Promise<{ data?: unknown; error?: unknown; response: Response }>

export class WorkflowFetchClient {
  readonly organizationId: string
  readonly appId: string
  private selectedUser: string | undefined
  private readonly logClientId: string | undefined
  private token: TokenSource | undefined
  protected readonly request: UntypedRequest

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
   * `POST /file/upload` from a Blob (a browser's `File`), sent as a FormData body: the browser
   * streams it itself. Resolves to the file record. (`WorkflowClient.uploadFile` streams any source in Node.js.)
   */
  async uploadBlob(fields: UploadFields, file: Blob, options: { headers?: ExtraHeaders } = {}): Promise<Schemas['File']> {
    const form = new FormData()
    form.append('fields', JSON.stringify(this.withTenant(fields)))
    form.append('fileBody', file, fields.fileName)
    const result = await this.request('post', '/file/upload', {
      params: { header: await this.headers(options.headers) },
      body: form,
      bodySerializer: (body) => body,
    })
    return unwrap(result) as Schemas['File']
  }

  /** `POST /file/download`, read whole into a Blob (a browser saves it), with the name the answer gives it. */
  async downloadBlob(
    body: WithoutTenant<Schemas['FileOperationRequest']>,
    options: { headers?: ExtraHeaders } = {},
  ): Promise<{ blob: Blob; fileName: string | undefined }> {
    const result = await this.request('post', '/file/download', {
      params: { header: await this.headers(options.headers) },
      body: this.withTenant(body),
      parseAs: 'blob',
    })
    if (!result.response.ok) throw WorkflowApiError.fromAnswer(result.response.status, result.error)
    return { blob: result.data as Blob, fileName: fileNameOf(result.response.headers.get('content-disposition')) }
  }

  /** `GET /model/getModel/{id}`: the live model's body, raw (a form model's fields, for instance). */
  async getModel(modelId: string, options: { headers?: ExtraHeaders } = {}): Promise<Schemas['ModelBody']> {
    return (await this.rawModel('/model/getModel/{id}', modelId, 'json', options.headers)) as Schemas['ModelBody']
  }

  /** `GET /model/getModel/{id}/bpmn`: a process model's live version as BPMN 2.0 XML, with its diagram. */
  async getModelBpmn(modelId: string, options: { headers?: ExtraHeaders } = {}): Promise<string> {
    return (await this.rawModel('/model/getModel/{id}/bpmn', modelId, 'text', options.headers)) as string
  }

  private async rawModel(path: string, modelId: string, parseAs: 'json' | 'text', headers: ExtraHeaders | undefined): Promise<unknown> {
    const result = await this.request('get', path, {
      params: {
        path: { id: modelId },
        query: { organizationId: this.organizationId, appId: this.appId },
        header: await this.headers(headers),
      },
      parseAs,
    })
    if (!result.response.ok) throw WorkflowApiError.fromAnswer(result.response.status, result.error)
    return result.data
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
  protected withTenant<Body extends object>(body: Body): Body & Record<TenantField, string> {
    return { organizationId: this.organizationId, appId: this.appId, ...body }
  }

  protected async headers(extra: ExtraHeaders = {}): Promise<Record<string, string | undefined>> {
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
export function unwrap(result: { data?: unknown; error?: unknown; response: Response }): unknown {
  if (!result.response.ok) throw WorkflowApiError.fromAnswer(result.response.status, result.error)
  const envelope = result.data as { status?: unknown; data?: unknown } | undefined
  if (envelope?.status !== 'success') throw WorkflowApiError.fromAnswer(result.response.status, envelope)
  return envelope.data
}

/** `attachment; filename="scan.pdf"` -> `scan.pdf` (also the RFC 5987 `filename*=UTF-8''…` form). */
export function fileNameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition)
  if (extended) return decodeURIComponent(extended[1]!)
  const plain = /filename\s*=\s*"([^"]*)"|filename\s*=\s*([^;]+)/i.exec(disposition)
  return plain ? (plain[1] ?? plain[2]!.trim()) : undefined
}
