/**
 * `uniqueItems` in time linear in the array's size. ajv's own keyword compares every pair of items
 * with a deep equality when they are not all scalars, O(n²): a tenant's schema with `uniqueItems`
 * and 10,000 objects in a caller's input held the engine's thread for seconds. Here each item is
 * encoded once, canonically (object keys sorted), and looked up in a map: two JSON values are deeply
 * equal exactly when their encodings are (0 and -0 encode alike, as deep equality holds them equal).
 */
import type { ErrorObject, KeywordDefinition, SchemaValidateFunction } from 'ajv'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** JSON text with object keys in order, so equal values read alike whatever order their keys came in. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`
  if (isRecord(value)) {
    const members = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson(value[key])}`)
    return `{${members.join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

const uniqueItems: SchemaValidateFunction = (unique: boolean, data: unknown[]): boolean => {
  if (!unique) return true
  const seen = new Map<string, number>()
  for (const [index, item] of data.entries()) {
    const key = canonicalJson(item)
    const first = seen.get(key)
    if (first !== undefined) {
      const error: Partial<ErrorObject> = {
        keyword: 'uniqueItems',
        message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`,
        params: { i: index, j: first },
      }
      uniqueItems.errors = [error]
      return false
    }
    seen.set(key, index)
  }
  return true
}

/** Replaces ajv's `uniqueItems` (remove that keyword first). */
export const linearUniqueItems: KeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  validate: uniqueItems,
}
