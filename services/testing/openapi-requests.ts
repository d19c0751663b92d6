/**
 * Test support: one valid-looking request per operation of an OpenAPI document, generated from the
 * document's own schemas by json-schema-faker, with its randomness drawn from a fast-check seed so
 * that a run is reproducible (the same seed gives the same requests).
 */
import fc from 'fast-check'
import { JSONSchemaFaker, type Schema } from 'json-schema-faker'
import type { OpenApiDocument } from '../../plugins/docs/plugin.js'
import { type ContractOperation, operationsOf } from './contract.js'

/** A JSON Schema as the documents write it (a plain object; `$ref`s point into the document). */
export type JsonSchema = Record<string, unknown>

export type ParameterLocation = 'path' | 'query' | 'header'

export interface ParameterSpec {
  name: string
  in: ParameterLocation
  required: boolean
  schema: JsonSchema
}

/** How the request body travels: a JSON document, a multipart form whose `fields` part is JSON, or none. */
export type BodyKind = 'json' | 'multipart' | 'none'

export interface GeneratedRequest {
  operationId: string
  method: string
  /** The path as the document writes it, with `{name}` placeholders. */
  pathTemplate: string
  parameters: ParameterSpec[]
  /** Values of the parameters, by location and name. */
  values: Record<ParameterLocation, Record<string, string>>
  bodyKind: BodyKind
  /** The JSON body, or for a multipart body the object sent as its `fields` part. */
  body: unknown
  /** The schema of `body` (of the `fields` part for multipart). */
  bodySchema: JsonSchema | undefined
  /** The operation names the admin token among its security requirements. */
  adminToken: boolean
}

/** A random source in [0, 1) that replays the same sequence for the same seed. */
export function seededRandom(seed: number): () => number {
  const unit = fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true })
  const [stream] = fc.sample(fc.infiniteStream(unit), { seed, numRuns: 1 })
  const iterator = stream![Symbol.iterator]()
  return () => iterator.next().value as number
}

/** Follows `$ref`s (local pointers into the document) until a schema or parameter that is not a reference. */
export function resolveRef<T = JsonSchema>(document: OpenApiDocument, value: unknown): T {
  let current = value as Record<string, unknown>
  for (let hops = 0; typeof current?.$ref === 'string'; hops++) {
    if (hops > 32) throw new Error(`reference cycle at ${String(current.$ref)}`)
    const pointer = (current.$ref as string)
      .replace(/^#\//, '')
      .split('/')
      .map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'))
    current = pointer.reduce<unknown>((node, segment) => (node as Record<string, unknown>)[segment], document) as Record<string, unknown>
  }
  return current as T
}

/** The JSON types a schema allows (empty when it leaves the type open). */
export function schemaTypes(document: OpenApiDocument, schema: unknown): string[] {
  const resolved = resolveRef(document, schema)
  const type = resolved.type
  if (Array.isArray(type)) return type as string[]
  if (typeof type === 'string') return type === 'integer' ? ['integer', 'number'] : [type]
  if (resolved.enum) return [...new Set((resolved.enum as unknown[]).map((value) => jsonType(value)))]
  return []
}

/** The JSON type of a value as JSON Schema names it. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'array'
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number'
  return typeof value
}

/** A schema generator bound to one document: `$ref`s resolve against the document's components. */
const FAKER_OPTIONS = {
  alwaysFakeOptionals: false,
  optionalsProbability: 0.5,
  maxItems: 3,
  maxLength: 24,
  failOnInvalidFormat: false,
  failOnInvalidTypes: false,
  useExamplesValue: false,
  useDefaultValue: false,
  refDepthMax: 4,
} as const

export class RequestGenerator {
  private readonly random: () => number

  constructor(
    private readonly document: OpenApiDocument,
    seed: number,
  ) {
    this.random = seededRandom(seed)
  }

  /** A value that satisfies `schema` (as far as json-schema-faker can tell). */
  value(schema: unknown): unknown {
    // json-schema-faker's options are global: each call sets this generator's own random source.
    JSONSchemaFaker.option({ ...FAKER_OPTIONS, random: this.random })
    return JSONSchemaFaker.generate({ ...(schema as object), components: this.document.components } as Schema)
  }

  request(entry: ContractOperation): GeneratedRequest {
    const operation = entry.operation
    const parameters = ((operation.parameters ?? []) as unknown[]).map((raw) => {
      const parameter = resolveRef<Record<string, unknown>>(this.document, raw)
      return {
        name: parameter.name as string,
        in: parameter.in as ParameterLocation,
        required: parameter.required === true,
        schema: (parameter.schema ?? { type: 'string' }) as JsonSchema,
      }
    })
    const values: GeneratedRequest['values'] = { path: {}, query: {}, header: {} }
    for (const parameter of parameters) {
      // Optional parameters are sometimes left out, as a client would.
      if (!parameter.required && this.value({ type: 'boolean' }) === false) continue
      values[parameter.in][parameter.name] = String(this.value(parameter.schema))
    }
    const content = (resolveRef<Record<string, unknown>>(this.document, operation.requestBody ?? {}).content ?? {}) as Record<
      string,
      { schema?: unknown }
    >
    let bodyKind: BodyKind = 'none'
    let bodySchema: JsonSchema | undefined
    if (content['application/json']?.schema) {
      bodyKind = 'json'
      bodySchema = resolveRef(this.document, content['application/json'].schema)
    } else if (content['multipart/form-data']?.schema) {
      bodyKind = 'multipart'
      const form = resolveRef(this.document, content['multipart/form-data'].schema)
      const fields = resolveRef(this.document, (form.properties as Record<string, JsonSchema>).fields)
      bodySchema = resolveRef(this.document, fields.contentSchema ?? { type: 'object' })
    }
    const security = (operation.security ?? []) as Array<Record<string, unknown>>
    return {
      operationId: operation.operationId as string,
      method: entry.method.toUpperCase(),
      pathTemplate: entry.path,
      parameters,
      values,
      bodyKind,
      body: bodySchema ? this.value(bodySchema) : undefined,
      bodySchema,
      adminToken: security.some((requirement) => 'adminToken' in requirement),
    }
  }

  /** One generated request per operation of the document, in document order. */
  all(): GeneratedRequest[] {
    return operationsOf(this.document).map((entry) => this.request(entry))
  }
}
