/**
 * Checks real answers against the OpenAPI documents the services serve, so a test fails when a
 * response drifts from its documented schema.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { loadOpenApiDocument, type OpenApiDocument } from '../../plugins/docs/plugin.js'

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

const METHODS = ['get', 'post', 'put', 'delete', 'patch']

export interface ContractOperation {
  method: string
  path: string
  operation: Record<string, unknown>
}

export function operationsOf(document: OpenApiDocument): ContractOperation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] as Record<string, unknown> })),
  )
}

function pointerEscape(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1')
}

export class ContractChecker {
  private readonly ajv = addFormats(new Ajv2020({ strict: false, allErrors: true }))
  private readonly cache = new Map<string, ValidateFunction>()
  private readonly byOperationId = new Map<string, ContractOperation>()

  constructor(
    private readonly service: 'engine' | 'gateway',
    readonly document: OpenApiDocument = loadOpenApiDocument(service),
  ) {
    this.ajv.addSchema(document as object, service)
    for (const entry of operationsOf(document)) this.byOperationId.set(entry.operation.operationId as string, entry)
  }

  /** The schema errors of `body` as the `status` answer of `operationId` (empty when it conforms). */
  errors(operationId: string, status: number, body: unknown): string[] {
    const entry = this.byOperationId.get(operationId)
    if (!entry) return [`${this.service} has no operation ${operationId}`]
    const responses = entry.operation.responses as Record<string, { content?: Record<string, unknown>; $ref?: string }>
    const key = String(status) in responses ? String(status) : `${String(status)[0]}XX` in responses ? `${String(status)[0]}XX` : undefined
    if (!key) return [`${operationId} documents no ${status} answer`]
    const pointer = `#/paths/${pointerEscape(entry.path)}/${entry.method}/responses/${key}`
    const cacheKey = `${pointer}`
    let validate = this.cache.get(cacheKey)
    if (!validate) {
      const response = responses[key]!
      const target = response.$ref
        ? `${this.service}${response.$ref}/content/application~1json/schema`
        : `${this.service}${pointer}/content/application~1json/schema`
      validate = this.ajv.compile({ $ref: target })
      this.cache.set(cacheKey, validate)
    }
    return validate(body) ? [] : (validate.errors ?? []).map((error) => `${error.instancePath || '/'} ${error.message}`)
  }
}
