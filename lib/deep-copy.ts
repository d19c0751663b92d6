/**
 * Deep copies of state: documents, process instances, form data. Several times faster than
 * structuredClone for what they hold — plain objects, arrays, Dates and primitives are copied here;
 * anything else goes to structuredClone, so the copy is never less faithful than its.
 */
export function deepCopy<T>(value: T): T {
  if (typeof value !== 'object' || value === null) return value
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length)
    for (let i = 0; i < value.length; i++) copy[i] = deepCopy(value[i] as unknown)
    return copy as T
  }
  if (value instanceof Date) return new Date(value.getTime()) as T
  const proto: unknown = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return structuredClone(value)
  const fields = value as Record<string, unknown>
  const copy: Record<string, unknown> = proto === null ? (Object.create(null) as Record<string, unknown>) : {}
  for (const field in fields) {
    const item = deepCopy(fields[field])
    // A plain assignment of `__proto__` would set the copy's prototype instead of a field.
    if (field === '__proto__') Object.defineProperty(copy, field, { value: item, enumerable: true, writable: true, configurable: true })
    else copy[field] = item
  }
  return copy as T
}
