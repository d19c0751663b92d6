/**
 * Where a tenant's JSON Schema is checked against a caller's input. Checking is tenant code run on
 * the caller's data: linear in the input (unique-items.ts), yet a large input is still milliseconds
 * of the engine's thread per request. Input whose JSON is at most INLINE_CHECK_CHARACTERS is checked
 * on the engine's thread; larger input is checked in the worker pool, as a run of its own (a
 * function with the schema as its input and no steps), under the run's time limit and the tenant's
 * share of the pool.
 */
import { type FlowFunctionDefinition, type JsonSchema, RuntimeError, type RunEnvironment } from '../types.js'
import type { SchemaCheck } from '../schemas.js'

/** About 16 KB of JSON: a millisecond or two of checking on the engine's thread, whatever the schema. */
export const INLINE_CHECK_CHARACTERS = 16_384

/** Is `value` small enough to be checked against a schema on the engine's thread? */
export function checksInline(value: unknown): boolean {
  return (JSON.stringify(value)?.length ?? 0) <= INLINE_CHECK_CHARACTERS
}

/** The id the pool's run of a schema check goes by (in its errors and metrics). */
const SCHEMA_CHECK = 'inputSchemaCheck'

/** Messages describing why `input` fails `schema` (checked here or in the pool, by its size); empty when it is valid. */
export async function checkInput(
  schema: JsonSchema | undefined,
  check: SchemaCheck,
  input: unknown,
  env: RunEnvironment | undefined,
): Promise<string[]> {
  if (schema === undefined) return []
  const isolation = env?.isolation
  if (!env || !isolation || checksInline(input)) return check(input)
  const definition: FlowFunctionDefinition = { input: schema, steps: [] }
  try {
    await isolation.run({ functionId: SCHEMA_CHECK, definition, request: { input } }, env, () => Promise.resolve(undefined))
    return []
  } catch (error) {
    if (error instanceof RuntimeError && error.kind === 'validation' && error.details.problem !== undefined) return [error.details.problem]
    throw error
  }
}
