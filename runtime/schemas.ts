/**
 * The JSON Schemas of a model (a process's `input`, each function's `input` and `output`), compiled
 * once with the dialect model validation checks them against, and turned into readable messages.
 */
import type { ErrorObject, ValidateFunction } from 'ajv'
import { createModelSchemaCompiler } from '../model/validation.js'
import type { JsonSchema } from './types.js'

/** Messages describing why a value fails the schema; empty when it satisfies it. */
export type SchemaCheck = (value: unknown) => string[]

const compiler = createModelSchemaCompiler()

function describe(error: ErrorObject): string {
  const where = error.instancePath === '' ? '' : `${error.instancePath.slice(1).replaceAll('/', '.')} `
  if (error.keyword === 'additionalProperties') {
    return `${where}must not have the property "${String((error.params as { additionalProperty?: unknown }).additionalProperty)}"`.trim()
  }
  return `${where}${error.message ?? 'is invalid'}`
}

const acceptsAnything: SchemaCheck = () => []

export function compileSchema(schema: JsonSchema | undefined): SchemaCheck {
  if (schema === undefined) return acceptsAnything
  const id = typeof schema.$id === 'string' ? schema.$id : undefined
  // A recompile (after a cache eviction) would otherwise clash with the `$id` compiled before.
  if (id !== undefined && compiler.getSchema(id)) compiler.removeSchema(id)
  const validate: ValidateFunction = compiler.compile(schema)
  // The compiled function stands alone; keeping ajv's own entry would only grow with every recompile.
  compiler.removeSchema(id ?? schema)
  return (value) => (validate(value) ? [] : (validate.errors ?? []).map(describe))
}
