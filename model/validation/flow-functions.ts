/**
 * Flow functions (docs/models.md, "Flow functions") beyond their structure: their expressions,
 * writable paths and schemas, and the function ids a `call` may name.
 */
import type { FlowFunctionDefinition, FlowNode } from '../types.js'
import { Fault, child, expression, jsonSchema, optionalExpression, writablePath } from './checks.js'
import { checkStructure } from './structure.js'

/** The function ids a reference may name: the model's own, then the app's (`functions` models). */
export class FunctionScope {
  constructor(
    private readonly local: ReadonlySet<string>,
    private readonly app: ReadonlySet<string>,
  ) {}

  reference(functionId: string, path: string): void {
    if (!this.local.has(functionId) && !this.app.has(functionId))
      throw new Fault(path, `names function "${functionId}", which is neither defined in this model nor in a functions model of the app`)
  }
}

function flowNodes(nodes: readonly FlowNode[], path: string, scope: FunctionScope): void {
  nodes.forEach((node, index) => flowNode(node, child(path, index), scope))
}

/**
 * The nodes under an `if`: the schema leaves them open (the generated TypeBox schemas cannot be
 * recursive), so each is checked against the flow node's definition here.
 */
function nestedFlowNodes(nodes: readonly unknown[] | undefined, path: string, scope: FunctionScope): void {
  nodes?.forEach((node, index) => {
    checkStructure(node, '/$defs/FlowNode', child(path, index))
    flowNode(node as FlowNode, child(path, index), scope)
  })
}

function flowNode(node: FlowNode, path: string, scope: FunctionScope): void {
  // A data node's `set` (what an update assigns) is a member of it, not a second kind of node.
  if ('data' in node) {
    for (const field of ['doc', 'filter', 'set', 'upsert'] as const) optionalExpression(node[field], child(path, field))
    if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
  } else if ('set' in node) {
    for (const [target, source] of Object.entries(node.set)) {
      writablePath(target, child(child(path, 'set'), target))
      expression(source, child(child(path, 'set'), target))
    }
  } else if ('if' in node) {
    expression(node.if, child(path, 'if'))
    nestedFlowNodes(node.then, child(path, 'then'), scope)
    nestedFlowNodes(node.else, child(path, 'else'), scope)
  } else if ('http' in node) {
    const requestPath = child(path, 'http')
    expression(node.http.url, child(requestPath, 'url'))
    optionalExpression(node.http.headers, child(requestPath, 'headers'))
    optionalExpression(node.http.body, child(requestPath, 'body'))
    if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
  } else if ('call' in node) {
    scope.reference(node.call, child(path, 'call'))
    optionalExpression(node.input, child(path, 'input'))
    if (node.as !== undefined) writablePath(node.as, child(path, 'as'))
  } else if ('info' in node) {
    expression(node.info, child(path, 'info'))
  } else {
    expression(node.fail, child(path, 'fail'))
  }
}

function flowFunction(definition: FlowFunctionDefinition, path: string, scope: FunctionScope): void {
  if (definition.input !== undefined) jsonSchema(definition.input, child(path, 'input'))
  if (definition.output !== undefined) jsonSchema(definition.output, child(path, 'output'))
  flowNodes(definition.steps, child(path, 'steps'), scope)
}

/** A map of function definitions whose `call`s may name each other or the app's functions. */
export function functionMap(
  functions: Readonly<Record<string, FlowFunctionDefinition>>,
  path: string,
  appFunctions: ReadonlySet<string>,
): void {
  const scope = new FunctionScope(new Set(Object.keys(functions)), appFunctions)
  for (const [functionId, definition] of Object.entries(functions)) flowFunction(definition, child(path, functionId), scope)
}
