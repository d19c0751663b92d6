/**
 * Model validation (MODEL.md): the schema of every model type and, for process models, every
 * reference, JSON Schema and expression. A pure function (no HTTP, no store): the gateway's
 * insertModel answers 400 with the first fault's path, and the engine's runtime compiler relies on
 * a stored model having passed it, so whatever the runtime would trip over is rejected here.
 *
 * Paths name the fault from the model's root: `modelBody.steps.approve.actions[1].next`.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import { Cron } from 'croner'
import { costlyConstruct } from './expression-cost.js'
import { expressionRegexProblem, parseExpression } from './expression-syntax.js'
import { re2SchemaRegExp } from './regex-engine.js'
import { parseAssignmentPath } from './paths.js'
import { RuntimeError } from './errors.js'
import type { ActionType, StepDefinition, WorkflowModel } from './types.js'

export interface ModelFault {
  path: string
  message: string
}

export interface ModelToValidate {
  modelID: unknown
  type: unknown
  modelBody: unknown
}

export const MODEL_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/
/** Settings file ids (DESIGN.md §6), also the `:file` of `GET /settings/:file`. */
export const SETTINGS_FILE_PATTERN = /^[A-Za-z0-9_-]{1,64}$/

export const MODEL_TYPES: ReadonlyArray<WorkflowModel['type']> = ['process', 'form', 'settings', 'constants', 'functions', 'dataCollection', 'jobScheduler']
const STEP_TYPES: ReadonlyArray<StepDefinition['type']> = ['userTask', 'function', 'switch', 'parallel', 'join', 'end']
const ACTION_TYPES: readonly ActionType[] = ['complete', 'cancel', 'return', 'function']
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

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

/**
 * The JSON Schema dialect of models (2020-12, with formats): unknown keywords and formats are
 * errors, so a typo in a schema is caught on insert rather than silently ignored at run time. The
 * runtime can compile with the same settings.
 */
export function createModelSchemaCompiler(): Ajv2020 {
  return addFormats(new Ajv2020({ strict: true, strictTypes: false, strictTuples: false, strictRequired: false, allErrors: true, logger: false, code: { regExp: re2SchemaRegExp } }))
}

const schemaCompiler = createModelSchemaCompiler()

class Fault extends Error {
  constructor(readonly path: string, readonly problem: string) {
    super(`${path}: ${problem}`)
  }
}

type JsonRecord = Record<string, unknown>

function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/** `base.key`, or `base["odd key"]` when the key would not read as a plain segment. */
function child(base: string, key: string | number): string {
  if (typeof key === 'number') return `${base}[${key}]`
  return /^[A-Za-z0-9_$-]+$/.test(key) ? `${base}.${key}` : `${base}[${JSON.stringify(key)}]`
}

function record(value: unknown, path: string): JsonRecord {
  if (!isRecord(value)) throw new Fault(path, 'must be an object')
  return value
}

function onlyKeys(value: JsonRecord, path: string, allowed: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new Fault(child(path, key), `is not a known field (allowed: ${allowed.join(', ')})`)
  }
}

function text(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) throw new Fault(path, 'must be a non-empty string')
  return value
}

function optionalText(value: unknown, path: string): void {
  if (value !== undefined) text(value, path)
}

function optionalBoolean(value: unknown, path: string): void {
  if (value !== undefined && typeof value !== 'boolean') throw new Fault(path, 'must be a boolean')
}

function list(value: unknown, path: string, minItems = 0): unknown[] {
  if (!Array.isArray(value)) throw new Fault(path, 'must be an array')
  if (value.length < minItems) throw new Fault(path, `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`)
  return value
}

function oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) throw new Fault(path, `must be one of ${allowed.join(', ')}`)
  return value as T
}

function modelIdLike(value: unknown, path: string): void {
  if (typeof value !== 'string' || !MODEL_ID_PATTERN.test(value)) throw new Fault(path, `must match ${MODEL_ID_PATTERN.source}`)
}

function expression(value: unknown, path: string): ReturnType<typeof parseExpression> {
  const source = text(value, path)
  let parsed: ReturnType<typeof parseExpression>
  try {
    parsed = parseExpression(source)
  } catch (error) {
    const { message, position } = error as { message?: string; position?: number }
    throw new Fault(path, `is not a valid expression: ${message ?? String(error)}${position === undefined ? '' : ` (at position ${position})`}`)
  }
  const regex = expressionRegexProblem(parsed)
  if (regex) throw new Fault(path, `is not a valid expression: ${regex}`)
  return parsed
}

/**
 * An expression of the model itself (not of a flow function): it runs on the engine's thread, so
 * it may not use the constructs whose one step can be unboundedly slow (expression-cost.ts).
 */
function modelExpression(value: unknown, path: string): void {
  const costly = costlyConstruct(expression(value, path).ast())
  if (costly) throw new Fault(path, `may not use ${costly}: expressions of the model run on the engine's thread; move the work into a flow function`)
}

function optionalExpression(value: unknown, path: string): void {
  if (value !== undefined) expression(value, path)
}

function jsonSchema(value: unknown, path: string): JsonRecord {
  const schema = record(value, path)
  try {
    schemaCompiler.compile(schema)
  } catch (error) {
    throw new Fault(path, `is not a valid JSON Schema: ${(error as Error).message}`)
  } finally {
    // The compiler would otherwise keep every schema it ever saw (and reject a reused $id).
    schemaCompiler.removeSchema(schema)
  }
  return schema
}

/** `data.x.y`, `output`, `vars.tmp`: where a flow function may write (the runtime's own rule). */
function writablePath(value: unknown, path: string): void {
  const target = text(value, path)
  try {
    parseAssignmentPath(target, path)
  } catch (error) {
    throw new Fault(path, error instanceof RuntimeError ? (error.details.problem ?? error.message) : String(error))
  }
}

function schemaDeclares(schema: unknown, property: string): boolean {
  return isRecord(schema) && isRecord(schema.properties) && property in schema.properties
}

// ---------------------------------------------------------------------------------------------- functions

/** The function ids a reference may name: the model's own, then the app's (`functions` models). */
class FunctionScope {
  constructor(private readonly local: ReadonlySet<string>, private readonly app: ReadonlySet<string>) {}

  reference(value: unknown, path: string): string {
    const functionId = text(value, path)
    if (!this.local.has(functionId) && !this.app.has(functionId)) throw new Fault(path, `names function "${functionId}", which is neither defined in this model nor in a functions model of the app`)
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
  if (kinds.length !== 1) throw new Fault(path, `must have exactly one of ${FLOW_NODE_KINDS.join(', ')}${kinds.length > 1 ? ` (has ${kinds.join(', ')})` : ''}`)
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
      if (typeof request.method !== 'string' || !HTTP_METHODS.includes(request.method.toUpperCase())) throw new Fault(child(requestPath, 'method'), `must be one of ${HTTP_METHODS.join(', ')}`)
      expression(request.url, child(requestPath, 'url'))
      optionalExpression(request.headers, child(requestPath, 'headers'))
      optionalExpression(request.body, child(requestPath, 'body'))
      if (request.timeoutMs !== undefined && !(Number.isInteger(request.timeoutMs) && (request.timeoutMs as number) > 0)) throw new Fault(child(requestPath, 'timeoutMs'), 'must be a positive integer')
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
function functionMap(value: unknown, path: string, appFunctions: ReadonlySet<string>): void {
  const functions = record(value, path)
  const scope = new FunctionScope(new Set(Object.keys(functions)), appFunctions)
  for (const [functionId, definition] of Object.entries(functions)) flowFunction(definition, child(path, functionId), scope)
}

// ---------------------------------------------------------------------------------------------- process models

interface ProcessIndex {
  steps: JsonRecord
  swimlanes: ReadonlySet<string>
  functions: FunctionScope
}

function stepReference(value: unknown, path: string, steps: JsonRecord): string {
  const stepId = text(value, path)
  if (!Object.hasOwn(steps, stepId)) throw new Fault(path, `names step "${stepId}", which is not defined in modelBody.steps`)
  return stepId
}

function functionIdList(value: unknown, path: string, index: ProcessIndex): void {
  list(value, path).forEach((functionId, position) => index.functions.reference(functionId, child(path, position)))
}

function userTask(step: JsonRecord, path: string, index: ProcessIndex): void {
  onlyKeys(step, path, ['type', 'name', 'swimlane', 'assignTo', 'form', 'preForms', 'actions', 'taskFunctions'])
  text(step.name, child(path, 'name'))
  const swimlane = text(step.swimlane, child(path, 'swimlane'))
  if (!index.swimlanes.has(swimlane)) throw new Fault(child(path, 'swimlane'), `names swimlane "${swimlane}", which is not defined in modelBody.swimlanes`)
  if (step.assignTo !== undefined && step.assignTo !== 'initiator' && step.assignTo !== 'swimlane') modelExpression(step.assignTo, child(path, 'assignTo'))
  if (step.form !== undefined) modelIdLike(step.form, child(path, 'form'))
  if (step.preForms !== undefined) list(step.preForms, child(path, 'preForms')).forEach((form, position) => modelIdLike(form, child(child(path, 'preForms'), position)))
  const actionsPath = child(path, 'actions')
  const seen = new Set<string>()
  list(step.actions, actionsPath, 1).forEach((value, position) => {
    const actionPath = child(actionsPath, position)
    const action = record(value, actionPath)
    onlyKeys(action, actionPath, ['actionType', 'customType', 'next', 'function'])
    const actionType = oneOf(action.actionType, child(actionPath, 'actionType'), ACTION_TYPES)
    optionalText(action.customType, child(actionPath, 'customType'))
    // The action a request chooses is the pair (actionType, customType): two alike are ambiguous.
    const key = `${actionType}\u0000${String(action.customType ?? '')}`
    if (seen.has(key)) throw new Fault(actionPath, `repeats actionType "${actionType}"${action.customType === undefined ? '' : ` with customType "${String(action.customType)}"`}`)
    seen.add(key)
    if (actionType === 'function') {
      if (action.function === undefined) throw new Fault(child(actionPath, 'function'), 'is required for a function action')
      if (action.next !== undefined) throw new Fault(child(actionPath, 'next'), 'is not allowed on a function action (it does not end the task)')
    } else {
      if (action.next === undefined) throw new Fault(child(actionPath, 'next'), `is required for a ${actionType} action`)
      stepReference(action.next, child(actionPath, 'next'), index.steps)
    }
    if (action.function !== undefined) index.functions.reference(action.function, child(actionPath, 'function'))
  })
  if (step.taskFunctions !== undefined) functionIdList(step.taskFunctions, child(path, 'taskFunctions'), index)
}

function processStep(value: unknown, path: string, index: ProcessIndex): void {
  const step = record(value, path)
  const type = oneOf(step.type, child(path, 'type'), STEP_TYPES)
  switch (type) {
    case 'userTask':
      return userTask(step, path, index)
    case 'function':
      onlyKeys(step, path, ['type', 'function', 'next', 'onError'])
      index.functions.reference(step.function, child(path, 'function'))
      stepReference(step.next, child(path, 'next'), index.steps)
      if (step.onError !== undefined) oneOf(step.onError, child(path, 'onError'), ['rollback', 'fail'])
      return
    case 'switch': {
      onlyKeys(step, path, ['type', 'cases', 'default'])
      const casesPath = child(path, 'cases')
      list(step.cases, casesPath, 1).forEach((value, position) => {
        const casePath = child(casesPath, position)
        const branch = record(value, casePath)
        onlyKeys(branch, casePath, ['when', 'next'])
        modelExpression(branch.when, child(casePath, 'when'))
        stepReference(branch.next, child(casePath, 'next'), index.steps)
      })
      stepReference(step.default, child(path, 'default'), index.steps)
      return
    }
    case 'parallel': {
      onlyKeys(step, path, ['type', 'branches', 'join'])
      const branchesPath = child(path, 'branches')
      const branches = list(step.branches, branchesPath, 1).map((branch, position) => stepReference(branch, child(branchesPath, position), index.steps))
      const duplicate = branches.find((branch, position) => branches.indexOf(branch) !== position)
      if (duplicate !== undefined) throw new Fault(branchesPath, `lists step "${duplicate}" twice`)
      const join = stepReference(step.join, child(path, 'join'), index.steps)
      if ((index.steps[join] as JsonRecord).type !== 'join') throw new Fault(child(path, 'join'), `names step "${join}", which is not a join step`)
      return
    }
    case 'join':
      onlyKeys(step, path, ['type', 'next'])
      stepReference(step.next, child(path, 'next'), index.steps)
      return
    case 'end':
      onlyKeys(step, path, ['type', 'status'])
      if (step.status !== undefined) oneOf(step.status, child(path, 'status'), ['completed', 'cancelled'])
      return
  }
}

/** The steps a step can lead to (its next steps; a parallel's branches). */
function successors(step: JsonRecord): string[] {
  switch (step.type) {
    case 'userTask':
      return (step.actions as JsonRecord[]).flatMap((action) => (typeof action.next === 'string' ? [action.next] : []))
    case 'function':
    case 'join':
      return [step.next as string]
    case 'switch':
      return [...(step.cases as JsonRecord[]).map((branch) => branch.next as string), step.default as string]
    case 'parallel':
      return step.branches as string[]
    default:
      return []
  }
}

/** Each branch of a parallel step must be able to reach its join, and never an end step first. */
function parallelBranches(steps: JsonRecord): void {
  for (const [parallelId, value] of Object.entries(steps)) {
    const parallel = value as JsonRecord
    if (parallel.type !== 'parallel') continue
    const join = parallel.join as string
    ;(parallel.branches as string[]).forEach((branch, position) => {
      const path = child(child(child('modelBody.steps', parallelId), 'branches'), position)
      const visited = new Set<string>()
      const pending = [branch]
      let reachesJoin = false
      while (pending.length > 0) {
        const stepId = pending.pop()!
        if (stepId === join) {
          reachesJoin = true
          continue
        }
        if (visited.has(stepId)) continue
        visited.add(stepId)
        const step = steps[stepId] as JsonRecord
        if (step.type === 'end') throw new Fault(path, `reaches end step "${stepId}" inside the branch; an end is not allowed inside a parallel branch (the branch must run to join "${join}")`)
        pending.push(...successors(step))
      }
      if (!reachesJoin) throw new Fault(path, `never reaches the join "${join}"`)
    })
  }
}

function fileFunctionSchemas(body: JsonRecord, functions: JsonRecord): void {
  const requirements: Array<[field: string, input: string[], output: string[]]> = [
    ['fileUploadFunction', ['storageHandle', 'fileName'], ['storageHandle']],
    ['fileDownloadFunction', ['storageHandle'], []],
    ['fileDeleteFunction', ['storageHandle'], []],
  ]
  for (const [field, input, output] of requirements) {
    const functionId = body[field]
    // App-wide functions are checked by the engine when the file operation runs.
    if (typeof functionId !== 'string' || !Object.hasOwn(functions, functionId)) continue
    const definition = functions[functionId] as JsonRecord
    const functionPath = child('modelBody.functions', functionId)
    for (const property of input) {
      if (!schemaDeclares(definition.input, property)) throw new Fault(child(functionPath, 'input'), `must declare "${property}" (the ${field} of this process gets it)`)
    }
    for (const property of output) {
      if (!schemaDeclares(definition.output, property)) throw new Fault(child(functionPath, 'output'), `must declare "${property}" (the ${field} of this process may return it)`)
    }
  }
}

function processBody(body: JsonRecord, appFunctions: ReadonlySet<string>): void {
  const path = 'modelBody'
  onlyKeys(body, path, [
    'processId', 'name', 'input', 'businessKey', 'swimlanes', 'inform', 'start', 'steps', 'functions', 'namedFunctions',
    'fileUploadFunction', 'fileDownloadFunction', 'fileDeleteFunction',
  ])
  if (body.processId !== undefined) modelIdLike(body.processId, child(path, 'processId'))
  optionalText(body.name, child(path, 'name'))
  if (body.input !== undefined) jsonSchema(body.input, child(path, 'input'))
  if (body.businessKey !== undefined) modelExpression(body.businessKey, child(path, 'businessKey'))

  const swimlanes = body.swimlanes === undefined ? {} : record(body.swimlanes, child(path, 'swimlanes'))
  for (const [swimlaneId, value] of Object.entries(swimlanes)) {
    const swimlanePath = child(child(path, 'swimlanes'), swimlaneId)
    const swimlane = record(value, swimlanePath)
    onlyKeys(swimlane, swimlanePath, ['name', 'description'])
    text(swimlane.name, child(swimlanePath, 'name'))
    optionalText(swimlane.description, child(swimlanePath, 'description'))
  }

  if (body.inform !== undefined) {
    list(body.inform, child(path, 'inform')).forEach((value, position) => {
      const itemPath = child(child(path, 'inform'), position)
      const item = record(value, itemPath)
      onlyKeys(item, itemPath, ['key', 'label', 'header', 'display'])
      optionalText(item.key, child(itemPath, 'key'))
      optionalText(item.label, child(itemPath, 'label'))
      modelExpression(item.header, child(itemPath, 'header'))
      optionalBoolean(item.display, child(itemPath, 'display'))
    })
  }

  if (body.steps === undefined) throw new Fault(child(path, 'steps'), 'is required')
  const steps = record(body.steps, child(path, 'steps'))
  if (Object.keys(steps).length === 0) throw new Fault(child(path, 'steps'), 'must define at least one step')
  if (body.start === undefined) throw new Fault(child(path, 'start'), 'is required')
  stepReference(body.start, child(path, 'start'), steps)

  const localFunctions = body.functions === undefined ? {} : record(body.functions, child(path, 'functions'))
  const functions = new FunctionScope(new Set(Object.keys(localFunctions)), appFunctions)
  const index: ProcessIndex = { steps, swimlanes: new Set(Object.keys(swimlanes)), functions }
  for (const [stepId, step] of Object.entries(steps)) processStep(step, child(child(path, 'steps'), stepId), index)
  functionMap(localFunctions, child(path, 'functions'), appFunctions)

  if (body.namedFunctions !== undefined) {
    const namedPath = child(path, 'namedFunctions')
    const named = record(body.namedFunctions, namedPath)
    onlyKeys(named, namedPath, ['userTaskActivity', 'getUser'])
    for (const [name, functionId] of Object.entries(named)) functions.reference(functionId, child(namedPath, name))
  }
  for (const field of ['fileUploadFunction', 'fileDownloadFunction', 'fileDeleteFunction']) {
    if (body[field] !== undefined) functions.reference(body[field], child(path, field))
  }
  fileFunctionSchemas(body, localFunctions)
  parallelBranches(steps)
}

// ---------------------------------------------------------------------------------------------- other model types

function settingsBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['files'])
  if (body.files === undefined) throw new Fault('modelBody.files', 'is required')
  const files = record(body.files, 'modelBody.files')
  for (const [fileId, content] of Object.entries(files)) {
    const path = child('modelBody.files', fileId)
    if (!SETTINGS_FILE_PATTERN.test(fileId)) throw new Fault(path, `file id must match ${SETTINGS_FILE_PATTERN.source}`)
    if (content === undefined) throw new Fault(path, 'must be a JSON value')
  }
}

function constantsBody(body: JsonRecord): void {
  for (const [name, value] of Object.entries(body)) {
    const path = child('modelBody', name)
    if (name.length > 128) throw new Fault(path, 'constant names are at most 128 characters')
    if (typeof value !== 'string') throw new Fault(path, 'must be a string')
  }
}

function functionsBody(body: JsonRecord, appFunctions: ReadonlySet<string>): void {
  onlyKeys(body, 'modelBody', ['functions'])
  if (body.functions === undefined) throw new Fault('modelBody.functions', 'is required')
  functionMap(body.functions, 'modelBody.functions', appFunctions)
}

function dataCollectionBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['name', 'indexes'])
  text(body.name, 'modelBody.name')
  if (body.indexes === undefined) return
  list(body.indexes, 'modelBody.indexes').forEach((value, position) => {
    const path = child('modelBody.indexes', position)
    const index = record(value, path)
    onlyKeys(index, path, ['keys', 'unique'])
    const keys = record(index.keys, child(path, 'keys'))
    if (Object.keys(keys).length === 0) throw new Fault(child(path, 'keys'), 'must name at least one field')
    for (const [field, direction] of Object.entries(keys)) {
      const fieldPath = child(child(path, 'keys'), field)
      if (field.startsWith('$') || field.split('.').some((segment) => segment.length === 0)) throw new Fault(fieldPath, 'is not a valid field path')
      if (direction !== 1 && direction !== -1) throw new Fault(fieldPath, 'must be 1 or -1')
    }
    optionalBoolean(index.unique, child(path, 'unique'))
  })
}

function cronPattern(value: unknown, path: string): void {
  const pattern = text(value, path)
  const fields = pattern.trim().split(/\s+/).length
  // Five fields, or six with a leading seconds field (DESIGN.md §6); `@daily` and friends too.
  if (!pattern.startsWith('@') && fields !== 5 && fields !== 6) throw new Fault(path, 'must have five fields, or six with a leading seconds field')
  try {
    new Cron(pattern, { paused: true })
  } catch (error) {
    throw new Fault(path, `is not a valid cron expression: ${(error as Error).message}`)
  }
}

function timeZone(value: unknown, path: string): void {
  const zone = text(value, path)
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
  } catch {
    throw new Fault(path, `is not a known time zone: ${zone}`)
  }
}

function jobSchedulerBody(body: JsonRecord): void {
  onlyKeys(body, 'modelBody', ['schedules'])
  if (body.schedules === undefined) throw new Fault('modelBody.schedules', 'is required')
  const ids = new Set<string>()
  list(body.schedules, 'modelBody.schedules').forEach((value, position) => {
    const path = child('modelBody.schedules', position)
    const schedule = record(value, path)
    onlyKeys(schedule, path, ['id', 'cron', 'timezone', 'startProcess', 'runFunction'])
    const id = text(schedule.id, child(path, 'id'))
    if (ids.has(id)) throw new Fault(child(path, 'id'), `repeats schedule id "${id}"`)
    ids.add(id)
    cronPattern(schedule.cron, child(path, 'cron'))
    if (schedule.timezone !== undefined) timeZone(schedule.timezone, child(path, 'timezone'))
    if ((schedule.startProcess === undefined) === (schedule.runFunction === undefined)) throw new Fault(path, 'must have exactly one of startProcess and runFunction')
    if (schedule.startProcess !== undefined) {
      const startPath = child(path, 'startProcess')
      const start = record(schedule.startProcess, startPath)
      onlyKeys(start, startPath, ['processId', 'input', 'initiatorUserId'])
      modelIdLike(start.processId, child(startPath, 'processId'))
      record(start.input, child(startPath, 'input'))
      optionalText(start.initiatorUserId, child(startPath, 'initiatorUserId'))
    } else {
      const runPath = child(path, 'runFunction')
      const run = record(schedule.runFunction, runPath)
      onlyKeys(run, runPath, ['functionId', 'inputParams'])
      text(run.functionId, child(runPath, 'functionId'))
      if (run.inputParams !== undefined) record(run.inputParams, child(runPath, 'inputParams'))
    }
  })
}

/**
 * The first fault of a model, or null when it is valid. `knownAppFunctions` are the function ids
 * that `functions` models of the same app define: a reference may name one of them instead of a
 * function of the model itself.
 */
export function validateModel(model: ModelToValidate, knownAppFunctions: ReadonlySet<string> = new Set()): ModelFault | null {
  try {
    modelIdLike(model.modelID, 'modelID')
    const type = oneOf(model.type, 'type', MODEL_TYPES)
    if (type === 'form') {
      if (model.modelBody === undefined) throw new Fault('modelBody', 'is required')
      return null
    }
    const body = record(model.modelBody, 'modelBody')
    switch (type) {
      case 'process':
        processBody(body, knownAppFunctions)
        break
      case 'settings':
        settingsBody(body)
        break
      case 'constants':
        constantsBody(body)
        break
      case 'functions':
        functionsBody(body, knownAppFunctions)
        break
      case 'dataCollection':
        dataCollectionBody(body)
        break
      case 'jobScheduler':
        jobSchedulerBody(body)
        break
    }
    return null
  } catch (error) {
    if (error instanceof Fault) return { path: error.path, message: error.problem }
    throw error
  }
}
