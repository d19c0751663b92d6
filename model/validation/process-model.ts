/** Process models: steps, swimlanes, references between them, parallel branches and file functions. */
import type { ActionType, EscalationKind, StepDefinition } from '../types.js'
import { parseIsoDuration } from '../duration.js'
import {
  Fault,
  type JsonRecord,
  child,
  jsonSchema,
  list,
  modelExpression,
  modelIdLike,
  oneOf,
  onlyKeys,
  optionalBoolean,
  optionalText,
  record,
  schemaDeclares,
  text,
} from './checks.js'
import { FunctionScope, functionMap } from './flow-functions.js'

const STEP_TYPES: ReadonlyArray<StepDefinition['type']> = ['userTask', 'function', 'switch', 'parallel', 'join', 'end']
const ACTION_TYPES: readonly ActionType[] = ['complete', 'cancel', 'return', 'function']
const ESCALATION_KINDS: readonly EscalationKind[] = ['notify', 'assignToSwimlane', 'assignToUser', 'action']
const ESCALATION_ACTION_TYPES: ReadonlyArray<Exclude<ActionType, 'function'>> = ['complete', 'cancel', 'return']
/** The fields besides `after`, `do` and `note` that each kind of escalation uses. */
const ESCALATION_FIELDS: Record<EscalationKind, readonly string[]> = {
  notify: [],
  assignToSwimlane: ['swimlane'],
  assignToUser: ['userId'],
  action: ['actionType'],
}

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

function isoDuration(value: unknown, path: string): void {
  const duration = text(value, path)
  if (!parseIsoDuration(duration)) {
    throw new Fault(path, `must be an ISO-8601 duration such as P3D or PT2S, shorter than a century (got "${duration}")`)
  }
}

/** `dueIn` or `dueDate` (not both), and the escalations: each with what its `do` needs and nothing it does not. */
function deadlines(step: JsonRecord, path: string, index: ProcessIndex): void {
  if (step.dueIn !== undefined && step.dueDate !== undefined) {
    throw new Fault(child(path, 'dueDate'), 'is not allowed with dueIn (give one of them)')
  }
  if (step.dueIn !== undefined) isoDuration(step.dueIn, child(path, 'dueIn'))
  if (step.dueDate !== undefined) modelExpression(step.dueDate, child(path, 'dueDate'))
  if (step.escalations === undefined) return
  const escalationsPath = child(path, 'escalations')
  list(step.escalations, escalationsPath, 1).forEach((value, position) => {
    const escalationPath = child(escalationsPath, position)
    const escalation = record(value, escalationPath)
    onlyKeys(escalation, escalationPath, ['after', 'do', 'swimlane', 'userId', 'actionType', 'note'])
    isoDuration(escalation.after, child(escalationPath, 'after'))
    const kind = oneOf(escalation.do, child(escalationPath, 'do'), ESCALATION_KINDS)
    optionalText(escalation.note, child(escalationPath, 'note'))
    for (const field of ['swimlane', 'userId', 'actionType']) {
      if (escalation[field] !== undefined && !ESCALATION_FIELDS[kind].includes(field)) {
        throw new Fault(child(escalationPath, field), `is not allowed with do "${kind}"`)
      }
    }
    if (kind === 'assignToSwimlane') {
      const swimlane = text(escalation.swimlane, child(escalationPath, 'swimlane'))
      if (!index.swimlanes.has(swimlane)) {
        throw new Fault(child(escalationPath, 'swimlane'), `names swimlane "${swimlane}", which is not defined in modelBody.swimlanes`)
      }
    }
    if (kind === 'assignToUser') {
      if (escalation.userId === undefined) {
        throw new Fault(child(escalationPath, 'userId'), 'is required for do "assignToUser" (an expression giving the userId)')
      }
      modelExpression(escalation.userId, child(escalationPath, 'userId'))
    }
    if (kind === 'action') {
      const actionTypePath = child(escalationPath, 'actionType')
      const actionType =
        escalation.actionType === undefined ? 'complete' : oneOf(escalation.actionType, actionTypePath, ESCALATION_ACTION_TYPES)
      const actions = step.actions as JsonRecord[]
      if (!actions.some((action) => action.actionType === actionType)) {
        const where = escalation.actionType === undefined ? escalationPath : actionTypePath
        throw new Fault(where, `takes action "${actionType}", which the step does not have`)
      }
    }
  })
}

function userTask(step: JsonRecord, path: string, index: ProcessIndex): void {
  onlyKeys(step, path, [
    'type',
    'name',
    'swimlane',
    'assignTo',
    'form',
    'preForms',
    'actions',
    'taskFunctions',
    'dueIn',
    'dueDate',
    'escalations',
  ])
  text(step.name, child(path, 'name'))
  const swimlane = text(step.swimlane, child(path, 'swimlane'))
  if (!index.swimlanes.has(swimlane))
    throw new Fault(child(path, 'swimlane'), `names swimlane "${swimlane}", which is not defined in modelBody.swimlanes`)
  if (step.assignTo !== undefined && step.assignTo !== 'initiator' && step.assignTo !== 'swimlane')
    modelExpression(step.assignTo, child(path, 'assignTo'))
  if (step.form !== undefined) modelIdLike(step.form, child(path, 'form'))
  if (step.preForms !== undefined)
    list(step.preForms, child(path, 'preForms')).forEach((form, position) => modelIdLike(form, child(child(path, 'preForms'), position)))
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
    if (seen.has(key))
      throw new Fault(
        actionPath,
        `repeats actionType "${actionType}"${action.customType === undefined ? '' : ` with customType "${String(action.customType)}"`}`,
      )
    seen.add(key)
    if (actionType === 'function') {
      if (action.function === undefined) throw new Fault(child(actionPath, 'function'), 'is required for a function action')
      if (action.next !== undefined)
        throw new Fault(child(actionPath, 'next'), 'is not allowed on a function action (it does not end the task)')
    } else {
      if (action.next === undefined) throw new Fault(child(actionPath, 'next'), `is required for a ${actionType} action`)
      stepReference(action.next, child(actionPath, 'next'), index.steps)
    }
    if (action.function !== undefined) index.functions.reference(action.function, child(actionPath, 'function'))
  })
  if (step.taskFunctions !== undefined) functionIdList(step.taskFunctions, child(path, 'taskFunctions'), index)
  deadlines(step, path, index)
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
      const branches = list(step.branches, branchesPath, 1).map((branch, position) =>
        stepReference(branch, child(branchesPath, position), index.steps),
      )
      const duplicate = branches.find((branch, position) => branches.indexOf(branch) !== position)
      if (duplicate !== undefined) throw new Fault(branchesPath, `lists step "${duplicate}" twice`)
      const join = stepReference(step.join, child(path, 'join'), index.steps)
      if ((index.steps[join] as JsonRecord).type !== 'join')
        throw new Fault(child(path, 'join'), `names step "${join}", which is not a join step`)
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
        if (step.type === 'end')
          throw new Fault(
            path,
            `reaches end step "${stepId}" inside the branch; an end is not allowed inside a parallel branch (the branch must run to ` +
              `join "${join}")`,
          )
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
      if (!schemaDeclares(definition.input, property))
        throw new Fault(child(functionPath, 'input'), `must declare "${property}" (the ${field} of this process gets it)`)
    }
    for (const property of output) {
      if (!schemaDeclares(definition.output, property))
        throw new Fault(child(functionPath, 'output'), `must declare "${property}" (the ${field} of this process may return it)`)
    }
  }
}

export function processBody(body: JsonRecord, appFunctions: ReadonlySet<string>): void {
  const path = 'modelBody'
  onlyKeys(body, path, [
    'processId',
    'name',
    'input',
    'businessKey',
    'swimlanes',
    'inform',
    'start',
    'steps',
    'functions',
    'namedFunctions',
    'fileUploadFunction',
    'fileDownloadFunction',
    'fileDeleteFunction',
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
