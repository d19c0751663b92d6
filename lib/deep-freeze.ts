/**
 * Freezes a value and everything inside it: what a cache hands to every request must not be
 * changed by one of them (a change would throw in strict mode instead of leaking into the others).
 */
export function deepFreeze<T>(value: T): Readonly<T> {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  for (const field of Object.values(value)) deepFreeze(field)
  return Object.freeze(value)
}
