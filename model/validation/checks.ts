/**
 * The building blocks of model validation beyond its structure (structure.ts): expressions, JSON
 * Schemas, writable paths; each checks one value at a path and throws a `Fault` naming it.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { costlyConstruct } from '../expression-cost.js'
import { expressionRegexProblem, parseExpression } from '../expression-syntax.js'
import { re2SchemaRegExp } from '../regex-engine.js'
import { linearUniqueItems } from './unique-items.js'
import { parseAssignmentPath } from '../paths.js'
import { RuntimeError } from '../errors.js'

export const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

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

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `base.key`, or `base["odd key"]` when the key would not read as a plain segment. */
export function child(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`
  return /^[A-Za-z0-9_$-]+$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`
}

/** What is wrong with a duration that the schema's pattern (or parseIsoDuration) refuses. */
export function isoDurationProblem(value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) return 'must be a non-empty string'
  return `must be an ISO-8601 duration such as P3D or PT2S, shorter than a century (got "${value}")`
}

export function expression(source: string, path: string): ReturnType<typeof parseExpression> {
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
export function modelExpression(source: string, path: string): void {
  const costly = costlyConstruct(expression(source, path).ast())
  if (costly)
    throw new Fault(path, `may not use ${costly}: expressions of the model run on the engine's thread; move the work into a flow function`)
}

export function optionalExpression(source: string | undefined, path: string): void {
  if (source !== undefined) expression(source, path)
}

export function jsonSchema(schema: JsonRecord, path: string): void {
  try {
    schemaCompiler.compile(schema)
  } catch (error) {
    throw new Fault(path, `is not a valid JSON Schema: ${(error as Error).message}`)
  } finally {
    // The compiler would otherwise keep every schema it ever saw (and reject a reused $id).
    schemaCompiler.removeSchema(schema)
  }
}

/** `data.x.y`, `output`, `vars.tmp`: where a flow function may write (the runtime's own rule). */
export function writablePath(target: string, path: string): void {
  try {
    parseAssignmentPath(target, path)
  } catch (error) {
    throw new Fault(path, error instanceof RuntimeError ? (error.details.problem ?? error.message) : String(error))
  }
}

/** `data` or `data.x.y`: where a step puts what it received (a message's variables, a child's result). */
export function dataPath(target: string, path: string): void {
  writablePath(target, path)
  if (target !== 'data' && !target.startsWith('data.')) throw new Fault(path, `must be data or start with data. (got "${target}")`)
}

export function schemaDeclares(schema: JsonRecord | undefined, property: string): boolean {
  return isRecord(schema) && isRecord(schema.properties) && property in schema.properties
}
