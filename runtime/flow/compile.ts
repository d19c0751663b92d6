/**
 * Flow functions (docs/models.md#flow-functions) compiled once: every expression parsed, every assignment
 * path checked, the input and output schemas compiled. Compiled functions are kept in a cache the
 * engine provides (its `service` cache), keyed by the function's id and definition, so a function
 * shared by many processes, or looked up again for every `call`, is compiled only once.
 */
import { type CompiledExpression, compileExpression } from '../expressions.js'
import { type AssignmentPath, parseAssignmentPath } from '../../model/paths.js'
import { compileSchema, type SchemaCheck } from '../schemas.js'
import type { DataOperation, FlowFunctionDefinition, FlowNode } from '../types.js'

export type CompiledNode =
  | { kind: 'set'; assignments: Array<{ path: AssignmentPath; value: CompiledExpression }> }
  | { kind: 'if'; condition: CompiledExpression; then: CompiledNode[]; else: CompiledNode[] }
  | {
      kind: 'http'
      location: string
      method: string
      url: CompiledExpression
      headers?: CompiledExpression
      body?: CompiledExpression
      timeoutMs?: number
      as?: AssignmentPath
    }
  | { kind: 'call'; location: string; functionId: string; input?: CompiledExpression; as?: AssignmentPath }
  | {
      kind: 'data'
      location: string
      operation: DataOperation['operation']
      collection: string
      doc?: CompiledExpression
      filter?: CompiledExpression
      set?: CompiledExpression
      upsert?: CompiledExpression
      as?: AssignmentPath
    }
  | { kind: 'info'; message: CompiledExpression }
  | { kind: 'fail'; message: CompiledExpression; code?: string }

export interface CompiledFunction {
  readonly functionId: string
  /** The definition it was compiled from, for a run handed to another thread. */
  readonly definition: FlowFunctionDefinition
  readonly checkInput: SchemaCheck
  readonly checkOutput: SchemaCheck
  readonly nodes: readonly CompiledNode[]
  /** Its first construct that keeps it off the engine's thread (expression-cost.ts), or undefined. */
  readonly costly: string | undefined
}

/** Where compiled functions are kept between compilations (the engine's `service` cache). */
export interface FunctionCache {
  get(key: string): CompiledFunction | undefined
  set(key: string, value: CompiledFunction): void
}

function optional(source: string | undefined, location: string): CompiledExpression | undefined {
  return source === undefined ? undefined : compileExpression(source, location)
}

function optionalPath(text: string | undefined, location: string): AssignmentPath | undefined {
  return text === undefined ? undefined : parseAssignmentPath(text, location)
}

function compileNodes(nodes: readonly FlowNode[], location: string): CompiledNode[] {
  return nodes.map((node, index) => compileNode(node, `${location}[${index}]`))
}

function compileNode(node: FlowNode, location: string): CompiledNode {
  // `data` first: a data node may carry a `set` member of its own.
  if ('data' in node) {
    return {
      kind: 'data',
      location,
      operation: node.data,
      collection: node.collection,
      ...optionalMember('doc', optional(node.doc, `${location}.doc`)),
      ...optionalMember('filter', optional(node.filter, `${location}.filter`)),
      ...optionalMember('set', optional(node.set, `${location}.set`)),
      ...optionalMember('upsert', optional(node.upsert, `${location}.upsert`)),
      ...optionalMember('as', optionalPath(node.as, `${location}.as`)),
    }
  }
  if ('set' in node) {
    return {
      kind: 'set',
      assignments: Object.entries(node.set).map(([path, source]) => ({
        path: parseAssignmentPath(path, `${location}.set`),
        value: compileExpression(source, `${location}.set["${path}"]`),
      })),
    }
  }
  if ('if' in node) {
    return {
      kind: 'if',
      condition: compileExpression(node.if, `${location}.if`),
      then: compileNodes(node.then ?? [], `${location}.then`),
      else: compileNodes(node.else ?? [], `${location}.else`),
    }
  }
  if ('http' in node) {
    const { method, url, headers, body, timeoutMs } = node.http
    return {
      kind: 'http',
      location,
      method: method.toUpperCase(),
      url: compileExpression(url, `${location}.http.url`),
      ...optionalMember('headers', optional(headers, `${location}.http.headers`)),
      ...optionalMember('body', optional(body, `${location}.http.body`)),
      ...optionalMember('timeoutMs', timeoutMs),
      ...optionalMember('as', optionalPath(node.as, `${location}.as`)),
    }
  }
  if ('call' in node) {
    return {
      kind: 'call',
      location,
      functionId: node.call,
      ...optionalMember('input', optional(node.input, `${location}.input`)),
      ...optionalMember('as', optionalPath(node.as, `${location}.as`)),
    }
  }
  if ('info' in node) return { kind: 'info', message: compileExpression(node.info, `${location}.info`) }
  if ('fail' in node)
    return { kind: 'fail', message: compileExpression(node.fail, `${location}.fail`), ...optionalMember('code', node.code) }
  throw new Error(`${location} is not a flow node`)
}

/** `{ key: value }` when the value is defined, `{}` otherwise (exactOptionalPropertyTypes-friendly spreads). */
function optionalMember<Key extends string, Value>(key: Key, value: Value | undefined): { [K in Key]?: Value } {
  return (value === undefined ? {} : { [key]: value }) as { [K in Key]?: Value }
}

/** Every expression of the nodes, nested ones included. */
function* expressionsOf(nodes: readonly CompiledNode[]): Generator<CompiledExpression> {
  for (const node of nodes) {
    switch (node.kind) {
      case 'set':
        for (const { value } of node.assignments) yield value
        break
      case 'if':
        yield node.condition
        yield* expressionsOf(node.then)
        yield* expressionsOf(node.else)
        break
      case 'info':
      case 'fail':
        yield node.message
        break
      default:
        // http, data and call nodes: their expressions are direct members.
        for (const member of Object.values(node)) if (isExpression(member)) yield member
    }
  }
}

function isExpression(value: unknown): value is CompiledExpression {
  return typeof value === 'object' && value !== null && 'evaluate' in value && 'source' in value
}

export function compileFunction(functionId: string, definition: FlowFunctionDefinition): CompiledFunction {
  const nodes = compileNodes(definition.steps, `functions.${functionId}.steps`)
  let costly: string | undefined
  for (const expression of expressionsOf(nodes)) {
    if (expression.costly) {
      costly = `${expression.location} uses ${expression.costly}`
      break
    }
  }
  return {
    functionId,
    definition,
    checkInput: compileSchema(definition.input),
    checkOutput: compileSchema(definition.output),
    nodes,
    costly,
  }
}

/** Compiles through a cache; without one, every compiler has a private cache. */
export class FunctionCompiler {
  private readonly cache: FunctionCache

  constructor(cache?: FunctionCache) {
    this.cache = cache ?? new Map<string, CompiledFunction>()
  }

  compile(functionId: string, definition: FlowFunctionDefinition): CompiledFunction {
    const key = `${functionId}:${JSON.stringify(definition)}`
    const cached = this.cache.get(key)
    if (cached) return cached
    const compiled = compileFunction(functionId, definition)
    this.cache.set(key, compiled)
    return compiled
  }
}
