/**
 * The dotted paths flow functions assign to (`set` keys, `as` targets): `data.x`, `output.y.z`,
 * `vars.tmp`. Only those three roots are writable, and no segment may reach an object's prototype,
 * so an assignment can never change anything but the run's own data.
 */
import { RuntimeError } from './errors.js'

export type WritableRoot = 'data' | 'output' | 'vars'

export interface AssignmentPath {
  readonly text: string
  readonly root: WritableRoot
  /** The keys below the root; empty when the whole root is replaced (`output`). */
  readonly keys: readonly string[]
}

const WRITABLE_ROOTS: ReadonlySet<string> = new Set<WritableRoot>(['data', 'output', 'vars'])
export const FORBIDDEN_PATH_KEYS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])

function invalidPath(location: string, problem: string): RuntimeError {
  return new RuntimeError('validation', `${location}: ${problem}`, { path: location, problem })
}

/** Parses an assignment path; a path the runtime must not write is a validation error of the model. */
export function parseAssignmentPath(text: string, location: string): AssignmentPath {
  const [root, ...keys] = text.split('.')
  if (root === undefined || !WRITABLE_ROOTS.has(root)) throw invalidPath(location, 'must start with data, output or vars')
  for (const key of keys) {
    if (key === '' || /\s/.test(key)) throw invalidPath(location, `has an empty or blank segment in "${text}"`)
    if (FORBIDDEN_PATH_KEYS.has(key)) throw invalidPath(location, `must not use the segment "${key}"`)
  }
  return { text, root: root as WritableRoot, keys }
}

/** Sets an own, enumerable property even when the key is `__proto__` (plain assignment would change the prototype). */
export function defineOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true })
  else target[key] = value
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** Assigns `value` at `path` inside `roots`, creating (or replacing non-object) intermediate objects. */
export function assignAtPath(roots: Record<WritableRoot, Record<string, unknown>>, path: AssignmentPath, value: unknown): void {
  if (path.keys.length === 0) {
    if (!isRecord(value)) throw new RuntimeError('validation', `"${path.text}" can only be replaced by an object`)
    const root = roots[path.root]
    for (const key of Object.keys(root)) delete root[key]
    for (const [key, member] of Object.entries(value)) defineOwn(root, key, member)
    return
  }
  let target = roots[path.root]
  const last = path.keys.length - 1
  for (let index = 0; index < last; index++) {
    const key = path.keys[index] as string
    const next = Object.hasOwn(target, key) ? target[key] : undefined
    if (isRecord(next)) target = next
    else {
      const created: Record<string, unknown> = {}
      target[key] = created
      target = created
    }
  }
  const key = path.keys[last] as string
  if (value === undefined) delete target[key]
  else target[key] = value
}
