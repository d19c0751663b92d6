/** The building blocks of model validation: each checks one value at a path and throws a `Fault` naming it. */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { costlyConstruct } from '../expression-cost.js'
import { expressionRegexProblem, parseExpression } from '../expression-syntax.js'
import { re2SchemaRegExp } from '../regex-engine.js'
import { linearUniqueItems } from './unique-items.js'
import { parseAssignmentPath } from '../paths.js'
import { RuntimeError } from '../errors.js'

export const MODEL_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/**
 * The JSON Schema dialect of models (2020-12, with formats): unknown keywords and formats are
 * errors, so a typo in a schema is caught on insert rather than silently ignored at run time. The
 * runtime can compile with the same settings. `uniqueItems` is checked in linear time (unique-items.ts).
 */
export function createModelSchemaCompiler(): Ajv2020 {
  const compiler = addFormats(
    new Ajv2020({
      strict: true,
      strictTypes: false,
      strictTuples: false,
      strictRequired: false,
      allErrors: true,
      logger: false,
      code: { regExp: re2SchemaRegExp },
    }),
  )
  // Schemas are tenants' code run against callers' input: no keyword may cost more than linear time.
  compiler.removeKeyword('uniqueItems')
  compiler.addKeyword(linearUniqueItems)
  return compiler
}

const schemaCompiler = createModelSchemaCompiler()

export class Fault extends Error {
  constructor(
    readonly path: string,
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`)
  }
}

export type JsonRecord = Record<string, unknown>

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `base.key`, or `base["odd key"]` when the key would not read as a plain segment. */
export function child(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`
  return /^[A-Za-z0-9_$-]+$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`
}

export function record(value: unknown, path: string): JsonRecord {
  if (!isRecord(value)) throw new Fault(path, 'must be an object')
  return value
}

export function onlyKeys(value: JsonRecord, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new Fault(child(path, key), `is not a known field (allowed: ${allowed.join(', ')})`)
  }
}

export function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Fault(path, 'must be a non-empty string')
  return value
}

export function optionalText(value: unknown, path: string): void {
  if (value !== undefined) text(value, path)
}

export function optionalBoolean(value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw new Fault(path, 'must be a boolean')
}

export function list(value: unknown, path: string, minItems = 0): unknown[] {
  if (!Array.isArray(value)) throw new Fault(path, 'must be an array')
  if (value.length < minItems) throw new Fault(path, `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`)
  return value
}

export function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value))
    throw new Fault(path, `must be one of ${allowed.join(', ')}`)
  return value as T
}

export function modelIdLike(value: unknown, path: string): void {
  if (typeof value !== 'string' || !MODEL_ID_PATTERN.test(value)) throw new Fault(path, `must match ${MODEL_ID_PATTERN.source}`)
}

export function expression(value: unknown, path: string): ReturnType<typeof parseExpression> {
  const source = text(value, path)
  let parsed: ReturnType<typeof parseExpression>
  try {
    parsed = parseExpression(source)
  } catch (error) {
    const { message, position } = error as { message?: string; position?: number }
    throw new Fault(
      path,
      `is not a valid expression: ${message ?? String(error)}${position === undefined ? '' : ` (at position ${position})`}`,
    )
  }
  const regex = expressionRegexProblem(parsed)
  if (regex) throw new Fault(path, `is not a valid expression: ${regex}`)
  return parsed
}

/**
 * An expression of the model itself (not of a flow function): it runs on the engine's thread, so
 * it may not use the constructs whose one step can be unboundedly slow (expression-cost.ts).
 */
export function modelExpression(value: unknown, path: string): void {
  const costly = costlyConstruct(expression(value, path).ast())
  if (costly)
    throw new Fault(path, `may not use ${costly}: expressions of the model run on the engine's thread; move the work into a flow function`)
}

export function optionalExpression(value: unknown, path: string): void {
  if (value !== undefined) expression(value, path)
}

export function jsonSchema(value: unknown, path: string): JsonRecord {
  const schema = record(value, path)
  try {
    schemaCompiler.compile(schema)
  } catch (error) {
    throw new Fault(path, `is not a valid JSON Schema: ${(error as Error).message}`)
  } finally {
    // The compiler would otherwise keep every schema it ever saw (and reject a reused $id).
    schemaCompiler.removeSchema(schema)
  }
  return schema
}

/** `data.x.y`, `output`, `vars.tmp`: where a flow function may write (the runtime's own rule). */
export function writablePath(value: unknown, path: string): void {
  const target = text(value, path)
  try {
    parseAssignmentPath(target, path)
  } catch (error) {
    throw new Fault(path, error instanceof RuntimeError ? (error.details.problem ?? error.message) : String(error))
  }
}

export function schemaDeclares(schema: unknown, property: string): boolean {
  return isRecord(schema) && isRecord(schema.properties) && property in schema.properties
}
