/**
 * The structure of a model is the model schema (schema.ts): Ajv checks a value against one of its
 * definitions, and the first fault it finds becomes the model's fault, worded as the service words
 * it (its path in the dotted form of `child`, its message generic or from structure-messages.ts).
 *
 * Ajv stops at the first failing keyword (`allErrors: false`), so the fault reported is the first
 * in Ajv's order: within an object, `not`, `oneOf` and `allOf` come before `required`, then unknown
 * fields, then the fields in the schema's order; except that an unknown field is reported before a
 * missing or refused one (`unknownField`).
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import type { ErrorObject, ValidateFunction } from 'ajv'
import { Fault, type JsonRecord, addFormats, child, isRecord } from './checks.js'
import { MODEL_SCHEMA, MODEL_SCHEMA_ID, type SchemaNode, definitionName } from './schema.js'
import { type StructureMessage, definitionMessages } from './structure-messages.js'

/**
 * The model schema as checked: each `false` under `properties` (a field refused) becomes the
 * equivalent `{ not: {} }`, an object, so that its error's schema names the definition refusing
 * the field (a boolean has no identity to look it up by).
 */
function withRefusalsAsObjects(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(withRefusalsAsObjects)
  if (!isRecord(node)) return node
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => {
      if (key !== 'properties' || !isRecord(value)) return [key, withRefusalsAsObjects(value)]
      const fields = Object.entries(value).map(([field, schema]) => [field, schema === false ? { not: {} } : withRefusalsAsObjects(schema)])
      return [key, Object.fromEntries(fields)]
    }),
  )
}

const CHECKED_SCHEMA = withRefusalsAsObjects(MODEL_SCHEMA) as SchemaNode
const CHECKED_DEFINITIONS = CHECKED_SCHEMA.$defs as Record<string, SchemaNode>

let compiler: Ajv2020 | undefined

/** The validator of the schema at `pointer` (`/$defs/ProcessBody`), compiled on first use and kept by Ajv. */
function validatorAt(pointer: string): ValidateFunction {
  if (!compiler) {
    // The service's own schema, unlike tenants' (createModelSchemaCompiler): Ajv's own keywords
    // (its uniqueItems is linear for the strings of a parallel's branches), and `verbose` for the
    // schema each error comes from, which tells how to word it.
    compiler = addFormats(
      new Ajv2020({ strict: true, strictTypes: false, strictRequired: false, allErrors: false, verbose: true, logger: false }),
    )
    compiler.addSchema(CHECKED_SCHEMA)
  }
  const validate = compiler.getSchema(`${MODEL_SCHEMA_ID}#${pointer}`)
  if (!validate) throw new Error(`The model schema has nothing at ${pointer}`)
  return validate
}

let owners: WeakMap<object, string> | undefined

/** The definition a schema object belongs to (`undefined` for the model's own properties). */
function ownerOf(schema: unknown): string | undefined {
  if (!owners) {
    const found = new WeakMap<object, string>()
    const mark = (node: unknown, name: string): void => {
      if (node === null || typeof node !== 'object') return
      found.set(node, name)
      for (const value of Object.values(node)) mark(value, name)
    }
    for (const [name, definition] of Object.entries(CHECKED_DEFINITIONS)) mark(definition, name)
    owners = found
  }
  return typeof schema === 'object' && schema !== null ? owners.get(schema) : undefined
}

function render(message: StructureMessage, instance: unknown): string {
  return typeof message === 'string' ? message : message(instance)
}

/** A `$ref` to a definition, followed. */
function resolved(schema: SchemaNode): SchemaNode {
  const name = definitionName(schema.$ref)
  return name === undefined ? schema : resolved(CHECKED_DEFINITIONS[name]!)
}

/** What a value failing `schema` should be: "must be an object", "must be one of a, b", … */
function expectation(schema: SchemaNode, value: unknown): string {
  const name = definitionName(schema.$ref)
  if (name !== undefined) {
    const custom = definitionMessages[name]?.value
    return custom === undefined ? expectation(CHECKED_DEFINITIONS[name]!, value) : render(custom, value)
  }
  if (Array.isArray(schema.enum)) {
    const allowed = schema.enum as unknown[]
    return allowed.every((item) => typeof item === 'string') ? `must be one of ${allowed.join(', ')}` : `must be ${allowed.join(' or ')}`
  }
  switch (schema.type) {
    case 'object':
      return 'must be an object'
    case 'array': {
      const minItems = (schema.minItems as number | undefined) ?? 0
      if (!Array.isArray(value) || value.length >= minItems) return 'must be an array'
      return `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`
    }
    case 'boolean':
      return 'must be a boolean'
    case 'integer':
      return schema.minimum === 1 ? 'must be a positive integer' : 'must be an integer'
    case 'string':
      if (typeof schema.pattern === 'string') return `must match ${schema.pattern}`
      return ((schema.minLength as number | undefined) ?? 0) > 0 ? 'must be a non-empty string' : 'must be a string'
    default:
      return 'is not valid'
  }
}

interface Location {
  path: string
  /** The value at the path (undefined for a field that is missing). */
  value: unknown
  /** The object or array holding it, and its path. */
  parent?: Location
}

/** Follows an Ajv instancePath (`/steps/approve/actions/1`) from `value` at `path`. */
function locate(value: unknown, path: string, instancePath: string): Location {
  let location: Location = { path, value }
  for (const escaped of instancePath.split('/').slice(1)) {
    const segment = escaped.replaceAll('~1', '/').replaceAll('~0', '~')
    const container = location.value
    const parent = location
    location = Array.isArray(container)
      ? { path: child(location.path, Number(segment)), value: container[Number(segment)], parent }
      : { path: child(location.path, segment), value: (container as JsonRecord)[segment], parent }
  }
  return location
}

/** The fault of `value` (at `path`) against the schema at `pointer`, or null when it matches. */
export function structureFault(value: unknown, pointer: string, path: string): Fault | null {
  const validate = validatorAt(pointer)
  if (validate(value)) return null
  const errors = validate.errors ?? []
  // A failed oneOf lists what each branch found before itself: the outermost oneOf (the last one)
  // is the fault; a refused key is reported with its key (the propertyNames error, after its cause).
  const error =
    errors.findLast((candidate) => candidate.keyword === 'oneOf') ??
    errors.find((candidate) => candidate.keyword === 'propertyNames') ??
    errors[0]
  if (!error) throw new Error(`The model schema at ${pointer} refused a value without saying why`)
  return faultOf(error, locate(value, path, error.instancePath))
}

/** Throws the structural fault of `value`, if any. */
export function checkStructure(value: unknown, pointer: string, path: string): void {
  const fault = structureFault(value, pointer, path)
  if (fault) throw fault
}

/**
 * The schema of the object a keyword applies to: its own, or for a rule of its definition (an
 * `allOf`'s `then`, a `oneOf` branch: no `type` of their own) the definition's.
 */
function objectSchemaOf(parentSchema: SchemaNode, owner: string | undefined): SchemaNode {
  return parentSchema.type === 'object' || owner === undefined ? parentSchema : CHECKED_DEFINITIONS[owner]!
}

/**
 * A field of an object that its schema does not know. Ajv checks what an object requires (and
 * refuses) before its unknown fields; the service reports an unknown field first, as it is most
 * often the misspelling of the field found missing.
 */
function unknownField(error: ErrorObject, at: Location, owner: string | undefined): Fault | undefined {
  if (!['required', 'not', 'oneOf'].includes(error.keyword)) return undefined
  // A refused field (`not: {}`) is a fault of the object holding it.
  const object = error.keyword === 'not' && (error.schema as SchemaNode).required === undefined ? at.parent : at
  if (!object || !isRecord(object.value)) return undefined
  const checked =
    error.keyword === 'not' && owner !== undefined ? CHECKED_DEFINITIONS[owner]! : objectSchemaOf(error.parentSchema as SchemaNode, owner)
  if (checked.additionalProperties !== false) return undefined
  const known = Object.keys((checked.properties as SchemaNode | undefined) ?? {})
  const unknown = Object.keys(object.value).find((key) => !known.includes(key))
  return unknown === undefined ? undefined : new Fault(child(object.path, unknown), `is not a known field (allowed: ${known.join(', ')})`)
}

function faultOf(error: ErrorObject, at: Location): Fault {
  const parentSchema = error.parentSchema as SchemaNode
  const owner = ownerOf(parentSchema)
  const unknown = unknownField(error, at, owner)
  if (unknown) return unknown
  const messages = owner === undefined ? {} : (definitionMessages[owner] ?? {})
  const params = error.params as Record<string, unknown>
  const custom = (message: StructureMessage | undefined): string | undefined =>
    message === undefined ? undefined : render(message, at.value)
  switch (error.keyword) {
    case 'oneOf':
      if (!isRecord(at.value)) return new Fault(at.path, expectation({ type: 'object', ...parentSchema }, at.value))
      return oneOfFault(error.schema as SchemaNode[], at, custom(messages.oneOf))
    case 'required': {
      const field = params.missingProperty as string
      const property = (objectSchemaOf(parentSchema, owner).properties as Record<string, SchemaNode> | undefined)?.[field]
      const message =
        custom(messages.required?.[field] ?? messages.fields?.[field]) ?? (property ? expectation(property, undefined) : 'is required')
      return new Fault(child(at.path, field), message)
    }
    case 'additionalProperties': {
      const allowed = Object.keys((parentSchema.properties as SchemaNode | undefined) ?? {})
      return new Fault(child(at.path, params.additionalProperty as string), `is not a known field (allowed: ${allowed.join(', ')})`)
    }
    case 'not': {
      // `not: { required: [a, b] }` refuses b beside a (the fault is at b, in the object's words);
      // `not: {}` (a refused field) is at the field, in the words of the object holding it.
      const refused = ((error.schema as SchemaNode).required as string[] | undefined)?.at(-1)
      const message =
        messages.not === undefined ? 'is not allowed' : render(messages.not, refused === undefined ? at.parent?.value : at.value)
      return new Fault(refused === undefined ? at.path : child(at.path, refused), message)
    }
    case 'propertyNames':
      return new Fault(child(at.path, params.propertyName as string), custom(messages.propertyNames) ?? 'is not an allowed key')
    case 'minProperties':
      return new Fault(at.path, custom(messages.minProperties) ?? expectation(parentSchema, at.value))
    case 'uniqueItems':
      return new Fault(at.path, custom(messages.uniqueItems) ?? 'must not repeat an item')
    default: {
      const ownMessage = owner !== undefined && CHECKED_DEFINITIONS[owner] === parentSchema ? messages.value : undefined
      const fieldName = error.instancePath === '' ? undefined : error.instancePath.split('/').at(-1)
      const fieldMessage = fieldName === undefined ? undefined : messages.fields?.[fieldName]
      return new Fault(at.path, custom(ownMessage ?? fieldMessage) ?? expectation(parentSchema, at.value))
    }
  }
}

/**
 * A value matching none (or several) of a oneOf's branches. The branch it was meant to be is told
 * by a field each branch gives a constant (a step's `type`), else by the field each branch requires
 * first (a flow node's `set`, `if`, …, `data`): the value is checked against that branch alone, so
 * the fault is the one inside it rather than "matches no branch".
 */
function oneOfFault(branchRefs: SchemaNode[], at: Location, custom: string | undefined): Fault {
  if (custom !== undefined) return new Fault(at.path, custom)
  const instance = at.value as JsonRecord
  const branches = branchRefs.map((reference) => ({ name: definitionName(reference.$ref)!, schema: resolved(reference) }))
  const propertiesOf = (schema: SchemaNode): Record<string, SchemaNode> => (schema.properties as Record<string, SchemaNode>) ?? {}
  const discriminator = Object.keys(propertiesOf(branches[0]!.schema)).find((key) =>
    branches.every((branch) => propertiesOf(branch.schema)[key]?.const !== undefined),
  )
  let chosen: (typeof branches)[number] | undefined
  if (discriminator !== undefined) {
    const tags = branches.map((branch) => propertiesOf(branch.schema)[discriminator]!.const)
    chosen = branches.find((_, position) => tags[position] === instance[discriminator])
    if (!chosen) return new Fault(child(at.path, discriminator), `must be one of ${tags.join(', ')}`)
  } else {
    const tagOf = (branch: (typeof branches)[number]): string => (branch.schema.required as string[])[0]!
    const tags = branches.map(tagOf)
    const present = branches.filter((branch) => Object.hasOwn(instance, tagOf(branch)))
    // A branch that declares another branch's tag as a field of its own (a data node's `set`) is
    // the one meant whenever its own tag is there.
    chosen =
      present.find((branch) => tags.some((tag) => tag !== tagOf(branch) && tag in propertiesOf(branch.schema))) ??
      (present.length === 1 ? present[0] : undefined)
    if (!chosen) {
      const has = present.length > 1 ? ` (has ${present.map(tagOf).join(', ')})` : ''
      return new Fault(at.path, `must have exactly one of ${tags.join(', ')}${has}`)
    }
  }
  return (
    structureFault(instance, `/$defs/${chosen.name}`, at.path) ??
    new Fault(at.path, `must match exactly one of ${branches.map((b) => b.name).join(', ')}`)
  )
}
