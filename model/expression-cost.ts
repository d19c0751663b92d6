/**
 * What keeps a JSONata evaluation cheap enough for the engine's own thread. JSONata calls a hook on
 * every node it evaluates, so a long evaluation is stopped between nodes (deadline, node budget);
 * but a single node can be slow on its own. Those nodes are of two kinds:
 * - constructs whose one step costs what a value inside them says, not what the model says:
 *   function definitions (recursion), ranges (`[1..1e7]` allocates ten million items in one step),
 *   the sort operator and `$sort`, `$pad` (the width), `$distinct` and `$reduce` (quadratic),
 *   `$eval` (an expression built at run time escapes every check made on the model);
 * - builtins fed a huge value (`$match` over 20 MB, `$string` of a million items), which the size
 *   cap on every node's result rules out before any builtin sees the value.
 * Model expressions (conditions, assignments, headers) must avoid the first kind; flow functions
 * that use them run in the worker pool from their first step.
 */

/** Builtins whose one call can take time out of proportion to their input, or that escape the checks. */
const COSTLY_BUILTINS = new Set(['eval', 'pad', 'sort', 'distinct', 'reduce'])

/** The largest string a node may produce on the engine's thread (characters). */
export const MAX_INLINE_STRING_LENGTH = 100_000
/** The most items an array a node produces on the engine's thread may hold. */
export const MAX_INLINE_ITEMS = 10_000

interface AstNode {
  type?: unknown
  value?: unknown
}

function describe(node: AstNode): string | undefined {
  if (node.type === 'lambda') return 'a function definition'
  if (node.type === 'sort') return 'the sort operator ^(…)'
  if (node.type === 'binary' && node.value === '..') return 'a range [a..b]'
  if (node.type === 'variable' && typeof node.value === 'string' && COSTLY_BUILTINS.has(node.value)) return `$${node.value}`
  return undefined
}

/** The first construct of a parsed expression (its `ast()`) whose single step can be unboundedly slow, or undefined. */
export function costlyConstruct(ast: unknown): string | undefined {
  const pending: unknown[] = [ast]
  const seen = new Set<unknown>()
  while (pending.length > 0) {
    const node = pending.pop()
    if (typeof node !== 'object' || node === null || seen.has(node)) continue
    seen.add(node)
    const costly = describe(node as AstNode)
    if (costly) return costly
    pending.push(...Object.values(node))
  }
  return undefined
}

/** Why a node's result is too large to keep evaluating on the engine's thread, or undefined. */
export function oversizedResult(value: unknown): string | undefined {
  if (typeof value === 'string' && value.length > MAX_INLINE_STRING_LENGTH) return `a string of ${value.length} characters`
  if (Array.isArray(value) && value.length > MAX_INLINE_ITEMS) return `an array of ${value.length} items`
  return undefined
}
