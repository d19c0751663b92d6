/**
 * The engine's FlowHost: what a flow function may reach outside the runtime, for one request in
 * one app — the app's constants, outbound HTTP (undici, with the request's `additionalheaders`), the
 * app's business data collections, its function libraries and its users.
 */
import { type Dispatcher, request } from 'undici'
import type { Store } from '../../../store/port.js'
import { tenantFilter } from '../../../store/tenant.js'
import { Collections, type StoredUser } from '../../../store/collections.js'
import {
  type DataOperation,
  type FlowFunctionDefinition,
  type FlowHost,
  type HttpRequest,
  type HttpResponse,
  RuntimeError,
  type RuntimeUser,
} from '../../../runtime/types.js'
import { isScanBudgetExceededError } from '../../../store/port.js'
import {
  DEFAULT_DATA_LIMITS,
  type DataLimits,
  disallowedOperator,
  examinedBudget,
  filterLimitProblem,
  type LimitProblem,
  regexProblem,
  searchBudgetProblem,
} from './data-filter.js'
import type { OutboundPolicy } from './outbound-policy.js'
import type { UnitOfWork } from './unit-of-work.js'
import type { DeployedLookups } from '../models/service.js'

/** At most this many documents come back from one `find` of a data node. */
export const MAX_FOUND_DOCUMENTS = 1000

export interface FlowHostScope {
  store: Store
  /** Keeps outbound connections alive between calls; closed with the engine. Its connections pass `policy`. */
  dispatcher: Dispatcher
  /** Where outbound calls may go and which context headers they carry. */
  policy: OutboundPolicy
  appId: string
  organizationId: string
  /** The app's `functions` models, by function id. */
  appFunctions: ReadonlyMap<string, FlowFunctionDefinition>
  /** The app's data collections and constants (ProcessModels keeps them per tenant). */
  deployed: DeployedLookups
  /** Decoded `additionalheaders` of the request, sent along to allowed hosts (OutboundPolicy). */
  additionalHeaders: Record<string, string>
  /** The request's pending data writes. */
  unitOfWork: UnitOfWork
  /** Budgets of the whole request (docs/security.md "Budgets"); the defaults when absent. */
  limits?: HostLimits | undefined
  /**
   * With tracing: runs an outbound call in a span of the request's trace and adds its `traceparent`
   * to the headers. Absent, calls go out as they are.
   */
  traceOutbound?: OutboundTracer | undefined
}

export interface HostLimits {
  /** FLOW_HTTP_MAX_CALLS_PER_REQUEST: outbound calls of every function the request runs, together. */
  httpCallsPerRequest: number
  /** The bounds of data filters and searches, as for the data search route. */
  data: DataLimits
}

export const DEFAULT_HOST_LIMITS: HostLimits = { httpCallsPerRequest: 50, data: DEFAULT_DATA_LIMITS }

export type OutboundTracer = <T>(method: string, url: URL, headers: Record<string, string>, call: () => Promise<T>) => Promise<T>

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function technical(message: string): RuntimeError {
  return new RuntimeError('technical', message)
}

/** A request budget that ran out: the request fails with `code`, naming the variable that bounds it. */
function limitReached(code: string, problem: LimitProblem, collection?: string): RuntimeError {
  const where = collection === undefined ? '' : `data on ${collection}: `
  return new RuntimeError('limit', `${where}${problem.message}`, { code, limit: problem.limit })
}

function headerRecord(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const flat: Record<string, string> = {}
  for (const [name, value] of Object.entries(headers)) if (value !== undefined) flat[name] = Array.isArray(value) ? value.join(', ') : value
  return flat
}

export class StoreFlowHost implements FlowHost {
  private readonly constants = new Map<string, string | undefined>()

  /** Outbound calls this request has sent so far (an attempt moved to the pool replays its answers, not counted twice). */
  private httpCalls = 0
  private readonly limits: HostLimits

  constructor(private readonly scope: FlowHostScope) {
    this.limits = scope.limits ?? DEFAULT_HOST_LIMITS
  }

  /** A constant keeps its value for the whole request, whatever is deployed meanwhile. */
  async constant(name: string): Promise<string | undefined> {
    if (this.constants.has(name)) return this.constants.get(name)
    const value = (await this.scope.deployed.constant(name)) ?? undefined
    this.constants.set(name, value)
    return value
  }

  async http(outbound: HttpRequest): Promise<HttpResponse> {
    // A loop of steps may call out again and again; every call reaches a target and none can be undone.
    if (++this.httpCalls > this.limits.httpCallsPerRequest)
      throw limitReached('wm3057', {
        limit: 'FLOW_HTTP_MAX_CALLS_PER_REQUEST',
        message: `the request's functions tried more than ${this.limits.httpCallsPerRequest} outbound HTTP calls; nothing was stored`,
      })
    let url: URL
    try {
      url = new URL(outbound.url)
    } catch {
      throw technical(`HTTP call to an invalid URL: ${outbound.url}`)
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw technical(`HTTP call to a URL that is not http(s): ${outbound.url}`)
    const headers = this.scope.policy.contextHeadersFor(url, this.scope.additionalHeaders)
    if (outbound.idempotencyKey !== undefined) headers['idempotency-key'] = outbound.idempotencyKey
    // The function's own headers win over the request's context headers.
    for (const [name, value] of Object.entries(outbound.headers)) headers[name.toLowerCase()] = value
    let body: string | undefined
    if (outbound.body !== undefined && outbound.body !== null) {
      if (typeof outbound.body === 'string') body = outbound.body
      else {
        body = JSON.stringify(outbound.body)
        headers['content-type'] ??= 'application/json'
      }
    }
    const method = outbound.method.toUpperCase()
    const send = (): Promise<HttpResponse> => this.send(method, url, headers, body, outbound.timeoutMs)
    return this.scope.traceOutbound ? this.scope.traceOutbound(method, url, headers, send) : send()
  }

  private async send(
    method: string,
    url: URL,
    headers: Record<string, string>,
    body: string | undefined,
    timeoutMs: number,
  ): Promise<HttpResponse> {
    try {
      const response = await request(url, {
        method: method as Dispatcher.HttpMethod,
        headers,
        body,
        dispatcher: this.scope.dispatcher,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        signal: AbortSignal.timeout(timeoutMs),
      })
      const text = await response.body.text()
      const responseHeaders = headerRecord(response.headers)
      return { status: response.statusCode, headers: responseHeaders, body: parseBody(text, responseHeaders['content-type']) }
    } catch (error) {
      const reason = error instanceof Error && error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : (error as Error).message
      throw technical(`HTTP ${method} ${url.origin}${url.pathname} failed: ${reason}`)
    }
  }

  /**
   * Reads and writes go through the request's unit of work: writes are stored with the request's
   * commit (or never), reads see the run's own earlier writes.
   */
  async data(operation: DataOperation): Promise<unknown> {
    const deployed = await this.scope.deployed.dataCollection(operation.collection)
    if (!deployed) throw technical(`Data collection not found: ${operation.collection}`)
    const { collectionName: collection, uniqueKeys } = deployed
    const work = this.scope.unitOfWork
    const filter = () => this.filterOf(operation)
    const scan = () => ({ maxExamined: examinedBudget(operation.filter ?? {}, this.limits.data) })
    try {
      switch (operation.operation) {
        case 'insert':
          return { insertedId: await work.insert(collection, this.fieldsOf(operation.doc, 'doc'), uniqueKeys) }
        case 'update':
          return await work.update(collection, filter(), this.fieldsOf(operation.set, 'set'), operation.upsert === true, uniqueKeys, scan())
        case 'find':
          return await work.find(collection, filter(), MAX_FOUND_DOCUMENTS, scan())
        case 'delete':
          return { deletedCount: await work.delete(collection, filter(), scan()) }
        default:
          throw technical(`Unknown data operation: ${String((operation as { operation: unknown }).operation)}`)
      }
    } catch (error) {
      if (error instanceof RuntimeError) throw error
      if (isScanBudgetExceededError(error))
        throw limitReached('wm3103', searchBudgetProblem(scan().maxExamined, this.limits.data), operation.collection)
      throw technical(`Data ${operation.operation} on ${operation.collection} failed: ${(error as Error).message}`)
    }
  }

  appFunction(functionId: string): FlowFunctionDefinition | undefined {
    return this.scope.appFunctions.get(functionId)
  }

  async findUser(userId: string): Promise<RuntimeUser | null> {
    const user = await this.scope.store.collection<StoredUser>(Collections.users).findOne({ userId, ...tenantFilter(this.scope) })
    if (!user) return null
    return {
      userId: user.userId,
      fullName: user.fullName,
      roles: user.roles ?? [],
      swimlanes: user.swimlanes ?? [],
      ...(user.unit ? { unit: user.unit } : {}),
    }
  }

  private filterOf(operation: DataOperation): Record<string, unknown> {
    const filter = operation.filter ?? {}
    if (!isPlainObject(filter)) throw technical(`The filter of a data ${operation.operation} must be an object`)
    const operator = disallowedOperator(filter)
    if (operator) throw technical(`Filter operator not allowed in a data ${operation.operation}: ${operator}`)
    // The bounds before the patterns, which are compiled to be checked (see DataService.checkFilter).
    const bound = filterLimitProblem(filter, this.limits.data)
    if (bound) throw limitReached('wm3102', bound, operation.collection)
    const regex = regexProblem(filter)
    if (regex) throw technical(`Filter of a data ${operation.operation} refused at ${regex.path}: ${regex.problem}`)
    return filter
  }

  private fieldsOf(value: unknown, name: 'doc' | 'set'): Record<string, unknown> {
    if (!isPlainObject(value)) throw technical(`The ${name} of a data node must be an object`)
    const operator = Object.keys(value).find((key) => key.startsWith('$'))
    if (operator) throw technical(`Field names of a data node's ${name} may not start with $: ${operator}`)
    return { ...value }
  }
}

function parseBody(text: string, contentType: string | undefined): unknown {
  if (text === '') return null
  if (contentType && /\bjson\b/i.test(contentType)) {
    try {
      return JSON.parse(text)
    } catch {
      return text
    }
  }
  return text
}
