// @ts-check
/**
 * Turns a JSON Schema (the OpenAPI 3.1 subset the contracts use) into TypeBox source code.
 * Refs to `#/components/schemas/X` become references to the generated constant `X`, so the runtime
 * schema is plain inlined JSON Schema (Fastify needs no shared-schema registry) and the static type
 * follows from it.
 */

/** @typedef {Record<string, any>} Json */

/** Keywords that the TypeBox builders express themselves; everything else is passed as options. */
const STRUCTURAL = new Set([
  'type',
  'properties',
  'required',
  'items',
  'enum',
  'const',
  'oneOf',
  'anyOf',
  'allOf',
  '$ref',
  'additionalProperties',
])
/** Keywords kept on the runtime schema (validation and documentation); others (examples, x-*) are dropped. */
const KEPT = new Set([
  'format',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minItems',
  'maxItems',
  'uniqueItems',
  'minProperties',
  'maxProperties',
  'multipleOf',
  'description',
  'default',
  'title',
])

/**
 * @param {Json | boolean | undefined} schema
 * @param {(name: string) => string} refName maps a component name to the identifier to emit
 * @returns {string}
 */
export function toTypeBox(schema, refName) {
  if (schema === undefined || schema === true) return 'Type.Unknown()'
  if (schema === false) return 'Type.Never()'
  if (typeof schema.$ref === 'string') {
    const match = /^#\/components\/schemas\/(.+)$/.exec(schema.$ref)
    if (!match) throw new Error(`Unsupported $ref ${schema.$ref}`)
    return refName(match[1])
  }
  const options = optionsOf(schema)
  // `x-open-at-runtime`: the document shows the schema, but requests are checked by code of their own
  // (the model format: model-validation.ts answers with the fault's path). Fastify's Ajv, which
  // removes unknown fields and coerces types, must not try a union's variants on such a body.
  if (schema['x-open-at-runtime'] === true) return `Type.Object({}${withOptions({ ...options, additionalProperties: true })})`
  if (Array.isArray(schema.type)) {
    const variants = schema.type.map((/** @type {string} */ type) =>
      toTypeBox({ ...schema, type, description: undefined, default: undefined }, refName),
    )
    return `Type.Union([${variants.join(', ')}]${withOptions(options)})`
  }
  if (schema.const !== undefined) return `Type.Literal(${JSON.stringify(schema.const)}${withOptions(options)})`
  if (Array.isArray(schema.enum)) {
    const literals = schema.enum.map((/** @type {unknown} */ value) =>
      value === null ? 'Type.Null()' : `Type.Literal(${JSON.stringify(value)})`,
    )
    return literals.length === 1 ? literals[0] : `Type.Union([${literals.join(', ')}]${withOptions(options)})`
  }
  if (Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf)) {
    const variants = (schema.oneOf ?? schema.anyOf).map((/** @type {Json} */ variant) => toTypeBox(variant, refName))
    return `Type.Union([${variants.join(', ')}]${withOptions(options)})`
  }
  if (Array.isArray(schema.allOf)) {
    const parts = schema.allOf.map((/** @type {Json} */ part) => toTypeBox(part, refName))
    return parts.length === 1 ? parts[0] : `Type.Intersect([${parts.join(', ')}]${withOptions(options)})`
  }
  switch (schema.type) {
    case 'string':
      return schema.format === 'binary' ? `Type.Unknown(${optionsLiteral(options)})` : `Type.String(${optionsLiteral(options)})`
    case 'number':
      return `Type.Number(${optionsLiteral(options)})`
    case 'integer':
      return `Type.Integer(${optionsLiteral(options)})`
    case 'boolean':
      return `Type.Boolean(${optionsLiteral(options)})`
    case 'null':
      return `Type.Null(${optionsLiteral(options)})`
    case 'array':
      return `Type.Array(${toTypeBox(schema.items, refName)}${withOptions(options)})`
    case 'object':
    case undefined:
      return schema.type === undefined && !schema.properties && schema.additionalProperties === undefined
        ? `Type.Unknown(${optionsLiteral(options)})`
        : objectToTypeBox(schema, options, refName)
    default:
      throw new Error(`Unsupported schema type ${schema.type}`)
  }
}

/** @param {Json} schema @param {Json} options @param {(name: string) => string} refName */
function objectToTypeBox(schema, options, refName) {
  const properties = Object.entries(schema.properties ?? {})
  const additional = schema.additionalProperties
  if (properties.length === 0 && additional !== undefined && additional !== false) {
    // A free-form map: { [key: string]: T }
    return `Type.Record(Type.String(), ${toTypeBox(additional === true ? undefined : additional, refName)}${withOptions(options)})`
  }
  const required = new Set(schema.required ?? [])
  const fields = properties.map(([name, propertySchema]) => {
    const code = toTypeBox(propertySchema, refName)
    return `${JSON.stringify(name)}: ${required.has(name) ? code : `Type.Optional(${code})`}`
  })
  const objectOptions = { ...options }
  if (additional === false) objectOptions.additionalProperties = false
  else if (additional === true) objectOptions.additionalProperties = true
  else if (additional !== undefined) objectOptions.additionalProperties = '__RAW__' + toTypeBox(additional, refName)
  return `Type.Object({ ${fields.join(', ')} }${withOptions(objectOptions)})`
}

/** @param {Json} schema */
function optionsOf(schema) {
  /** @type {Json} */
  const options = {}
  for (const [key, value] of Object.entries(schema)) {
    if (!STRUCTURAL.has(key) && KEPT.has(key) && value !== undefined) options[key] = value
  }
  return options
}

/** @param {Json} options */
function optionsLiteral(options) {
  const entries = Object.entries(options)
  if (entries.length === 0) return ''
  const parts = entries.map(([key, value]) =>
    typeof value === 'string' && value.startsWith('__RAW__') ? `${key}: ${value.slice(7)}` : `${key}: ${JSON.stringify(value)}`,
  )
  return `{ ${parts.join(', ')} }`
}

/** @param {Json} options */
function withOptions(options) {
  const literal = optionsLiteral(options)
  return literal ? `, ${literal}` : ''
}

/**
 * Orders component names so that each comes after the components it references.
 * @param {Record<string, Json>} schemas
 * @returns {string[]}
 */
export function dependencyOrder(schemas) {
  /** @type {string[]} */
  const ordered = []
  const state = new Map()
  /** @param {string} name @param {string[]} trail */
  const visit = (name, trail) => {
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') throw new Error(`Recursive schema ${[...trail, name].join(' -> ')} is not supported`)
    state.set(name, 'visiting')
    for (const dependency of refsOf(schemas[name])) visit(dependency, [...trail, name])
    state.set(name, 'done')
    ordered.push(name)
  }
  for (const name of Object.keys(schemas).sort()) visit(name, [])
  return ordered
}

/** @param {unknown} node @returns {string[]} */
export function refsOf(node) {
  if (Array.isArray(node)) return node.flatMap(refsOf)
  if (node === null || typeof node !== 'object') return []
  return Object.entries(node).flatMap(([key, value]) => {
    if (key === '$ref' && typeof value === 'string') {
      const match = /^#\/components\/schemas\/(.+)$/.exec(value)
      return match ? [match[1]] : []
    }
    return refsOf(value)
  })
}
