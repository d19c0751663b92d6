/**
 * Breaks a generated request in the ways a careless or hostile client does: required fields
 * removed, wrong types, MongoDB operators where strings belong, prototype keys, very long strings,
 * invalid JSON, wrong content types, deep nesting, arrays where objects belong, odd path and query
 * values. Wrong-typed values are drawn by fast-check from the request's seed, so a run repeats.
 */
import fc from 'fast-check'
import type { OpenApiDocument } from '../../../plugins/docs/plugin.js'
import { type GeneratedRequest, type JsonSchema, jsonType, resolveRef, schemaTypes } from '../../../services/testing/openapi-requests.js'

export interface WireRequest {
  method: string
  /** Path and query string. */
  path: string
  headers: Record<string, string>
  body?: string | FormData
}

/**
 * `no-5xx`: any answer below 500 (or a documented 5xx, docs/reference/http.md#unusual-statuses). `depth-limit`: JSON nested deeper than
 * MAX_JSON_DEPTH must be refused before any work (400, or 413 when it is also too large).
 */
export type Expectation = 'no-5xx' | 'depth-limit'

export interface Variant {
  /** What was broken, e.g. `body.processId removed`; stable across runs, so a case can be named. */
  label: string
  expectation: Expectation
  wire: WireRequest
}

export const LONG_STRING_LENGTH = 100_000
/** Long path and query values stay under Node's 16 KiB header limit, past which no handler runs. */
export const LONG_URL_VALUE_LENGTH = 4_000
export const DEEP_NESTING_LEVELS = 100
export const NE_NULL = { $ne: null }

type QueryValues = Record<string, string | string[]>

/** The path of a request with its path values substituted and its query string. */
function pathOf(request: GeneratedRequest, pathValues: Record<string, string>, query: QueryValues): string {
  const path = request.pathTemplate.replace(/\{([^}]+)\}/g, (_, name: string) => encodeURIComponent(pathValues[name] ?? ''))
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) for (const one of [value].flat()) search.append(name, one)
  const text = search.toString()
  return text ? `${path}?${text}` : path
}

/** `levels` objects nested in one another. */
export function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: true }
  for (let level = 1; level < levels; level++) value = { level: value }
  return value
}

/** A value whose JSON type the schema does not allow, drawn from the seed. */
function wrongTypeValue(allowed: string[], seed: number): unknown {
  const anyType = fc.oneof(
    fc.string({ maxLength: 8 }),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(fc.string({ minLength: 1, maxLength: 5 }), fc.integer(), { maxKeys: 3, noNullPrototype: true }),
  )
  const acceptable = (value: unknown) =>
    !allowed.includes(jsonType(value)) && !(allowed.includes('number') && jsonType(value) === 'integer')
  return fc.sample(anyType.filter(acceptable), { seed, numRuns: 1 })[0]
}

function asText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value)
}

function summary(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 24 ? `${text.slice(0, 21)}...` : text
}

/** How a variant's body is written: a value serialised as JSON, or raw text. */
type BodyPayload = { value: unknown } | { text: string }

export interface VariantOptions {
  /** Headers of the caller (identity); they replace generated headers of the same name. */
  identity: Record<string, string>
  /** Seeds the wrong-typed values. */
  seed: number
  /** The file part of a multipart request. */
  fileBody: Blob
}

/**
 * The valid request itself, then every broken variant of it. The valid request comes last, so
 * that a change it makes (a task completed) does not keep the broken ones from the handlers.
 */
export function variantsOf(document: OpenApiDocument, request: GeneratedRequest, options: VariantOptions): Variant[] {
  const variants: Variant[] = []
  const headers = { ...request.values.header, ...options.identity }
  const baseQuery: QueryValues = { ...request.values.query }
  const basePath = pathOf(request, request.values.path, baseQuery)
  let seed = options.seed

  const wire = (
    payload: BodyPayload | undefined,
    changes: { path?: string; contentType?: string; multipartParts?: 'fields' | 'fileBody' } = {},
  ): WireRequest => {
    const path = changes.path ?? basePath
    if (payload === undefined || request.bodyKind === 'none') return { method: request.method, path, headers }
    const text = 'text' in payload ? payload.text : JSON.stringify(payload.value)
    if (request.bodyKind === 'multipart' && changes.contentType === undefined) {
      const form = new FormData()
      if (changes.multipartParts !== 'fileBody') form.append('fields', text)
      if (changes.multipartParts !== 'fields') form.append('fileBody', options.fileBody, 'sweep.txt')
      return { method: request.method, path, headers, body: form }
    }
    return { method: request.method, path, headers: { ...headers, 'content-type': changes.contentType ?? 'application/json' }, body: text }
  }
  const add = (
    label: string,
    payload: BodyPayload | undefined,
    changes?: Parameters<typeof wire>[1],
    expectation: Expectation = 'no-5xx',
  ) => variants.push({ label, expectation, wire: wire(payload, changes) })

  const valid: BodyPayload | undefined = request.bodyKind === 'none' ? undefined : { value: request.body }

  // Path and query parameters.
  for (const parameter of request.parameters) {
    if (parameter.in === 'path') {
      for (const [what, value] of [
        [`${LONG_URL_VALUE_LENGTH} chars`, 'p'.repeat(LONG_URL_VALUE_LENGTH)],
        ['{"$ne":null}', JSON.stringify(NE_NULL)],
        ['__proto__', '__proto__'],
        ['../ traversal', '../../etc/passwd'],
      ] as const) {
        add(`path.${parameter.name} ${what}`, valid, {
          path: pathOf(request, { ...request.values.path, [parameter.name]: value }, baseQuery),
        })
      }
      // A percent-encoding cut short: the router cannot decode the path.
      add(`path.${parameter.name} bad percent-encoding`, valid, {
        path: pathOf(request, { ...request.values.path, [parameter.name]: 'PLACEHOLDER' }, baseQuery).replace('PLACEHOLDER', '%E0%A4%A'),
      })
    }
    // Headers other than the caller's identity (that one is the authorization suites' matter).
    if (parameter.in === 'header' && !(parameter.name in options.identity)) {
      for (const [what, value] of [
        [`${LONG_URL_VALUE_LENGTH} chars`, 'h'.repeat(LONG_URL_VALUE_LENGTH)],
        ['invalid JSON', '{"a":'],
      ] as const) {
        const sent = wire(valid)
        variants.push({
          label: `header.${parameter.name} ${what}`,
          expectation: 'no-5xx',
          wire: { ...sent, headers: { ...sent.headers, [parameter.name]: value } },
        })
      }
    }
    if (parameter.in === 'query') {
      const current = request.values.query[parameter.name] ?? String(parameter.schema.type === 'integer' ? 1 : 'x')
      for (const [what, query] of [
        ['repeated', { ...baseQuery, [parameter.name]: [current, current] }],
        [`${LONG_URL_VALUE_LENGTH} chars`, { ...baseQuery, [parameter.name]: 'q'.repeat(LONG_URL_VALUE_LENGTH) }],
        ['[$ne]', { ...omit(baseQuery, parameter.name), [`${parameter.name}[$ne]`]: '' }],
        ['wrong type', { ...baseQuery, [parameter.name]: asText(wrongTypeValue(schemaTypes(document, parameter.schema), seed++)) }],
      ] as const) {
        add(`query.${parameter.name} ${what}`, valid, { path: pathOf(request, request.values.path, query as QueryValues) })
      }
    }
  }

  if (request.bodyKind !== 'none' && request.bodySchema) {
    const body = (request.body ?? {}) as Record<string, unknown>
    const schema = request.bodySchema
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    const required = (schema.required ?? []) as string[]

    // Required fields, and the optional ones present too: a handler may need what the schema leaves optional.
    for (const name of new Set([...required, ...Object.keys(body)])) add(`body.${name} removed`, { value: omit(body, name) })
    for (const [name, propertySchema] of Object.entries(properties)) {
      const types = schemaTypes(document, propertySchema)
      if (types.length > 0) {
        const wrong = wrongTypeValue(types, seed++)
        add(`body.${name} wrong type ${summary(wrong)}`, { value: { ...body, [name]: wrong } })
      }
      if (types.includes('string')) {
        add(`body.${name} {"$ne":null}`, { value: { ...body, [name]: NE_NULL } })
        add(`body.${name} ${LONG_STRING_LENGTH} chars`, { value: { ...body, [name]: 's'.repeat(LONG_STRING_LENGTH) } })
      }
      if (types.includes('number'))
        for (const extreme of [1e308, -1e308]) add(`body.${name} ${extreme}`, { value: { ...body, [name]: extreme } })
      if (types.includes('string') && typeof resolveRef(document, propertySchema).format === 'string')
        add(`body.${name} not its format`, { value: { ...body, [name]: 'not-a-date-nor-anything' } })
      if (types.includes('object')) {
        add(`body.${name} array for object`, { value: { ...body, [name]: [body[name] ?? {}] } })
        // Query operators where plain values belong (free-form objects reach stores and filters).
        for (const operators of [{ $gt: '' }, { $and: 1 }, { field: { $regex: '(' } }])
          add(`body.${name} ${JSON.stringify(operators)}`, { value: { ...body, [name]: operators } })
        // One level down: the declared fields of a nested object, broken the same way.
        const inner = resolveRef(document, propertySchema)
        const current = (body[name] !== null && typeof body[name] === 'object' && !Array.isArray(body[name]) ? body[name] : {}) as Record<
          string,
          unknown
        >
        for (const [innerName, innerSchema] of Object.entries((inner.properties ?? {}) as Record<string, JsonSchema>)) {
          const innerTypes = schemaTypes(document, innerSchema)
          if (innerTypes.length > 0) {
            const wrong = wrongTypeValue(innerTypes, seed++)
            add(`body.${name}.${innerName} wrong type ${summary(wrong)}`, {
              value: { ...body, [name]: { ...current, [innerName]: wrong } },
            })
          }
          if (innerTypes.includes('string'))
            add(`body.${name}.${innerName} {"$ne":null}`, { value: { ...body, [name]: { ...current, [innerName]: NE_NULL } } })
        }
        for (const innerName of (inner.required ?? []) as string[])
          add(`body.${name}.${innerName} removed`, { value: { ...body, [name]: omit(current, innerName) } })
      }
    }
    add('body array for object', { value: [body] })
    add('body null', { value: null })
    // Every string field at once: a NUL, a lone surrogate, a right-to-left override, a line break.
    const oddText = 'a\u0000b\ud800c\u202ed\ne'
    add('body strings with control characters', {
      value: {
        ...body,
        ...Object.fromEntries(
          Object.keys(properties)
            .filter((name) => schemaTypes(document, properties[name]).includes('string'))
            .map((name) => [name, oddText]),
        ),
      },
    })
    add('body __proto__ key', { text: `{"__proto__":{"polluted":true},${JSON.stringify(body).slice(1)}`.replace(/,}$/, '}') })
    add('body constructor.prototype key', {
      text: `{"constructor":{"prototype":{"polluted":true}},${JSON.stringify(body).slice(1)}`.replace(/,}$/, '}'),
    })
    const deepField = Object.keys(properties).find((name) => schemaTypes(document, properties[name]).includes('object')) ?? 'nested'
    const deep = { value: { ...body, [deepField]: nested(DEEP_NESTING_LEVELS) } }
    if (request.bodyKind === 'json') {
      add(`body.${deepField} nested ${DEEP_NESTING_LEVELS} levels`, deep, {}, 'depth-limit')
      const text = JSON.stringify(body)
      add('invalid JSON', { text: text.slice(0, Math.max(1, Math.floor(text.length / 2))) })
      add('empty JSON body', { text: '' })
      add('content-type text/plain', valid, { contentType: 'text/plain' })
      add('content-type application/x-www-form-urlencoded', { text: 'a=1&b=2' }, { contentType: 'application/x-www-form-urlencoded' })
      add('content-type multipart/form-data without boundary', valid, { contentType: 'multipart/form-data' })
    } else {
      add(`fields.${deepField} nested ${DEEP_NESTING_LEVELS} levels`, deep)
      add('fields invalid JSON', { text: '{"processId":' })
      add('fields part missing', valid, { multipartParts: 'fileBody' })
      add('fileBody part missing', valid, { multipartParts: 'fields' })
      add('content-type application/json', valid, { contentType: 'application/json' })
    }
  }

  add('valid', valid)
  return variants
}

function omit<T extends Record<string, unknown>>(value: T, name: string): T {
  const copy = { ...value }
  delete copy[name]
  return copy
}

/** Property schemas of a body schema, resolved (for callers that bind real ids). */
export function bodyProperties(document: OpenApiDocument, schema: JsonSchema | undefined): Record<string, JsonSchema> {
  const properties = (schema?.properties ?? {}) as Record<string, unknown>
  return Object.fromEntries(Object.entries(properties).map(([name, value]) => [name, resolveRef(document, value)]))
}
