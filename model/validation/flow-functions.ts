/** Flow functions (MODEL.md): their nodes, schemas and the function ids a `call` may name. */
import {
  Fault,
  type JsonRecord,
  child,
  expression,
  jsonSchema,
  list,
  oneOf,
  onlyKeys,
  optionalExpression,
  optionalText,
  record,
  text,
  writablePath,
} from './checks.js'

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']
const DATA_OPERATIONS = ['insert', 'update', 'find', 'delete'] as const
const FLOW_NODE_KINDS = ['set', 'if', 'http', 'call', 'data', 'info', 'fail'] as const
/** Which expressions each data operation needs and takes. */
const DATA_NODE_FIELDS: Record<(typeof DATA_OPERATIONS)[number], { required: readonly string[]; allowed: readonly string[] }> = {
  insert: { required: ['doc'], allowed: ['doc'] },
  update: { required: ['filter', 'set'], allowed: ['filter', 'set', 'upsert'] },
  find: { required: [], allowed: ['filter'] },
  delete: { required: ['filter'], allowed: ['filter'] },
}

/** The function ids a reference may name: the model's own, then the app's (`functions` models). */
export class FunctionScope {
  constructor(
    private readonly local: ReadonlySet<string>,
    private readonly app: ReadonlySet<string>,
  ) {}

  reference(value: unknown, path: string): string {
    const functionId = text(value, path)
    if (!this.local.has(functionId) && !this.app.has(functionId))
      throw new Fault(path, `names function "${functionId}", which is neither defined in this model nor in a functions model of the app`)
    return functionId
  }
}

function flowNodes(value: unknown, path: string, scope: FunctionScope): void {
  list(value, path).forEach((node, index) => flowNode(node, child(path, index), scope))
}

function flowNode(value: unknown, path: string, scope: FunctionScope): void {
  const node = record(value, path)
  // A data node's `set` (what an update assigns) is a member of it, not a second kind of node.
  const kinds = 'data' in node ? ['data' as const] : FLOW_NODE_KINDS.filter((kind) => kind in node)
  if (kinds.length !== 1)
    throw new Fault(path, `must have exactly one of ${FLOW_NODE_KINDS.join(', ')}${kinds.length > 1 ? ` (has ${kinds.join(', ')})` : ''}`)
  switch (kinds[0]) {
    case 'set': {
      onlyKeys(node, path, ['set'])
      const assignments = record(node.set, child(path, 'set'))
      if (Object.keys(assignments).length === 0) throw new Fault(child(path, 'set'), 'must assign at least one path')
      for (const [target, source] of Object.entries(assignments)) {
        writablePath(target, child(child(path, 'set'), target))
        expression(source, child(child(path, 'set'), target))
      }
      return
    }
    case 'if':
      onlyKeys(node, path, ['if', 'then', 'else'])
      expression(node.if, child(path, 'if'))
      if (node.then !== undefined) flowNodes(node.then, child(path, 'then'), scope)
      if (node.else !== undefined) flowNodes(node.else, child(path, 'else'), scope)
      return
    case 'http': {
      onlyKeys(node, path, ['http', 'as'])
      const requestPath = child(path, 'http')
      const request = record(node.http, requestPath)
      onlyKeys(request, requestPath, ['method', 'url', 'headers', 'body', 'timeoutMs'])
      if (typeof request.method !== 'string' || !HTTP_METHODS.includes(request.method.toUpperCase()))
        throw new Fault(child(requestPath, 'method'), `must be one of ${HTTP_METHODS.join(', ')}`)
      expression(request.url, child(requestPath, 'url'))
      optionalExpression(request.headers, child(requestPath, 'headers'))
      optionalExpression(request.body, child(requestPath, 'body'))
      if (request.timeoutMs !== undefined && !(Number.isInteger(request.timeoutMs) && (request.timeoutMs as number) > 0))
        throw new Fault(child(requestPath, 'timeoutMs'), 'must be a positive integer')
      if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
      return
    }
    case 'call':
      onlyKeys(node, path, ['call', 'input', 'as'])
      scope.reference(node.call, child(path, 'call'))
      optionalExpression(node.input, child(path, 'input'))
      if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
      return
    case 'data': {
      onlyKeys(node, path, ['data', 'collection', 'doc', 'filter', 'set', 'upsert', 'as'])
      const operation = oneOf(node.data, child(path, 'data'), DATA_OPERATIONS)
      text(node.collection, child(path, 'collection'))
      const { required, allowed } = DATA_NODE_FIELDS[operation]
      for (const field of ['doc', 'filter', 'set', 'upsert'] as const) {
        const fieldPath = child(path, field)
        if (node[field] === undefined) {
          if (required.includes(field)) throw new Fault(fieldPath, `is required for a ${operation}`)
          continue
        }
        if (!allowed.includes(field)) throw new Fault(fieldPath, `is not used by a ${operation}`)
        expression(node[field], fieldPath)
      }
      if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
      return
    }
    case 'info':
      onlyKeys(node, path, ['info'])
      expression(node.info, child(path, 'info'))
      return
    case 'fail':
      onlyKeys(node, path, ['fail', 'code'])
      expression(node.fail, child(path, 'fail'))
      optionalText(node.code, child(path, 'code'))
      return
  }
}

function flowFunction(value: unknown, path: string, scope: FunctionScope): JsonRecord {
  const definition = record(value, path)
  onlyKeys(definition, path, ['input', 'output', 'steps'])
  if (definition.input !== undefined) jsonSchema(definition.input, child(path, 'input'))
  if (definition.output !== undefined) jsonSchema(definition.output, child(path, 'output'))
  if (definition.steps === undefined) throw new Fault(child(path, 'steps'), 'is required')
  flowNodes(definition.steps, child(path, 'steps'), scope)
  return definition
}

/** A map of function definitions whose `call`s may name each other or the app's functions. */
export function functionMap(value: unknown, path: string, appFunctions: ReadonlySet<string>): void {
  const functions = record(value, path)
  const scope = new FunctionScope(new Set(Object.keys(functions)), appFunctions)
  for (const [functionId, definition] of Object.entries(functions)) flowFunction(definition, child(path, functionId), scope)
}
