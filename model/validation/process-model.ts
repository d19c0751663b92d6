/**
 * Process models beyond their structure: references between steps, swimlanes and functions,
 * expressions, durations, JSON Schemas, parallel branches and the schemas of file functions.
 */
import type {
  ActionDefinition,
  CallProcessStep,
  EscalationDefinition,
  ExternalTaskStep,
  ProcessModelBody,
  ReceiveStep,
  StepDefinition,
  TimerStep,
  UserTaskStep,
} from '../types.js'
import { parseIsoDuration } from '../duration.js'
import { Fault, child, dataPath, isoDurationProblem, jsonSchema, modelExpression, schemaDeclares } from './checks.js'
import { FunctionScope, functionMap } from './flow-functions.js'

type Steps = ProcessModelBody['steps']

interface ProcessIndex {
  steps: Steps
  swimlanes: ReadonlySet<string>
  functions: FunctionScope
}

function stepReference(stepId: string, path: string, steps: Steps): void {
  if (!Object.hasOwn(steps, stepId)) throw new Fault(path, `names step "${stepId}", which is not defined in modelBody.steps`)
}

function swimlaneReference(swimlane: string, path: string, index: ProcessIndex): void {
  if (!index.swimlanes.has(swimlane)) throw new Fault(path, `names swimlane "${swimlane}", which is not defined in modelBody.swimlanes`)
}

/** The schema's pattern admits `PT` and durations of centuries: parseIsoDuration is the rule. */
function isoDuration(duration: string, path: string): void {
  if (!parseIsoDuration(duration)) throw new Fault(path, isoDurationProblem(duration))
}

function escalation(escalation: EscalationDefinition, path: string, step: UserTaskStep, index: ProcessIndex): void {
  isoDuration(escalation.after, child(path, 'after'))
  if (escalation.do === 'assignToSwimlane') swimlaneReference(escalation.swimlane!, child(path, 'swimlane'), index)
  if (escalation.do === 'assignToUser') modelExpression(escalation.userId!, child(path, 'userId'))
  if (escalation.do === 'action') {
    const actionType = escalation.actionType ?? 'complete'
    if (!step.actions.some((action) => action.actionType === actionType)) {
      const where = escalation.actionType === undefined ? path : child(path, 'actionType')
      throw new Fault(where, `takes action "${actionType}", which the step does not have`)
    }
  }
}

function action(action: ActionDefinition, path: string, seen: Set<string>, index: ProcessIndex): void {
  // The action a request chooses is the pair (actionType, customType): two alike are ambiguous.
  const key = `${action.actionType}\u0000${action.customType ?? ''}`
  if (seen.has(key))
    throw new Fault(
      path,
      `repeats actionType "${action.actionType}"${action.customType === undefined ? '' : ` with customType "${action.customType}"`}`,
    )
  seen.add(key)
  if (action.next !== undefined) stepReference(action.next, child(path, 'next'), index.steps)
  if (action.function !== undefined) index.functions.reference(action.function, child(path, 'function'))
}

function userTask(step: UserTaskStep, path: string, index: ProcessIndex): void {
  swimlaneReference(step.swimlane, child(path, 'swimlane'), index)
  if (step.assignTo !== undefined && step.assignTo !== 'initiator' && step.assignTo !== 'swimlane')
    modelExpression(step.assignTo, child(path, 'assignTo'))
  const seen = new Set<string>()
  step.actions.forEach((value, position) => action(value, child(child(path, 'actions'), position), seen, index))
  step.taskFunctions?.forEach((functionId, position) =>
    index.functions.reference(functionId, child(child(path, 'taskFunctions'), position)),
  )
  if (step.dueIn !== undefined) isoDuration(step.dueIn, child(path, 'dueIn'))
  if (step.dueDate !== undefined) modelExpression(step.dueDate, child(path, 'dueDate'))
  step.escalations?.forEach((value, position) => escalation(value, child(child(path, 'escalations'), position), step, index))
}

function timer(step: TimerStep, path: string, steps: Steps): void {
  if ((step.duration === undefined) === (step.until === undefined)) throw new Fault(path, 'must have exactly one of duration and until')
  if (step.duration !== undefined) isoDuration(step.duration, child(path, 'duration'))
  if (step.until !== undefined) modelExpression(step.until, child(path, 'until'))
  stepReference(step.next, child(path, 'next'), steps)
}

function receive(step: ReceiveStep, path: string, steps: Steps): void {
  if (step.correlate !== undefined) modelExpression(step.correlate, child(path, 'correlate'))
  if (step.as !== undefined) dataPath(step.as, child(path, 'as'))
  stepReference(step.next, child(path, 'next'), steps)
  if (step.timeout) {
    isoDuration(step.timeout.after, child(child(path, 'timeout'), 'after'))
    stepReference(step.timeout.next, child(child(path, 'timeout'), 'next'), steps)
  }
}

function callProcess(step: CallProcessStep, path: string, steps: Steps): void {
  modelExpression(step.input, child(path, 'input'))
  if (step.as !== undefined) dataPath(step.as, child(path, 'as'))
  stepReference(step.next, child(path, 'next'), steps)
}

/** A worker's output is written into the dataInstance only: `as` is a `data.` path. */
function externalTask(step: ExternalTaskStep, path: string, steps: Steps): void {
  if (step.input !== undefined) modelExpression(step.input, child(path, 'input'))
  if (step.as !== undefined) dataPath(step.as, child(path, 'as'))
  stepReference(step.next, child(path, 'next'), steps)
}

function processStep(step: StepDefinition, path: string, index: ProcessIndex): void {
  switch (step.type) {
    case 'userTask':
      return userTask(step, path, index)
    case 'function':
      index.functions.reference(step.function, child(path, 'function'))
      return stepReference(step.next, child(path, 'next'), index.steps)
    case 'switch':
      step.cases.forEach((branch, position) => {
        const casePath = child(child(path, 'cases'), position)
        modelExpression(branch.when, child(casePath, 'when'))
        stepReference(branch.next, child(casePath, 'next'), index.steps)
      })
      return stepReference(step.default, child(path, 'default'), index.steps)
    case 'parallel':
      step.branches.forEach((branch, position) => stepReference(branch, child(child(path, 'branches'), position), index.steps))
      stepReference(step.join, child(path, 'join'), index.steps)
      if (index.steps[step.join]!.type !== 'join')
        throw new Fault(child(path, 'join'), `names step "${step.join}", which is not a join step`)
      return
    case 'join':
      return stepReference(step.next, child(path, 'next'), index.steps)
    case 'externalTask':
      return externalTask(step, path, index.steps)
    case 'end':
      if (step.output !== undefined) modelExpression(step.output, child(path, 'output'))
      return
    case 'timer':
      return timer(step, path, index.steps)
    case 'receive':
      return receive(step, path, index.steps)
    case 'callProcess':
      return callProcess(step, path, index.steps)
  }
}

/** The steps a step can lead to (its next steps; a parallel's branches). */
function successors(step: StepDefinition): string[] {
  switch (step.type) {
    case 'userTask':
      return step.actions.flatMap((action) => (action.next === undefined ? [] : [action.next]))
    case 'function':
    case 'join':
    case 'externalTask':
    case 'timer':
    case 'callProcess':
      return [step.next]
    case 'receive':
      return step.timeout ? [step.next, step.timeout.next] : [step.next]
    case 'switch':
      return [...step.cases.map((branch) => branch.next), step.default]
    case 'parallel':
      return step.branches
    case 'end':
      return []
  }
}

/** Each branch of a parallel step must be able to reach its join, and never an end step first. */
function parallelBranches(steps: Steps): void {
  for (const [parallelId, parallel] of Object.entries(steps)) {
    if (parallel.type !== 'parallel') continue
    const join = parallel.join
    parallel.branches.forEach((branch, position) => {
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
        const step = steps[stepId]!
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

const FILE_FUNCTIONS = ['fileUploadFunction', 'fileDownloadFunction', 'fileDeleteFunction'] as const

function fileFunctionSchemas(body: ProcessModelBody): void {
  const requirements: Array<[field: (typeof FILE_FUNCTIONS)[number], input: string[], output: string[]]> = [
    ['fileUploadFunction', ['storageHandle', 'fileName'], ['storageHandle']],
    ['fileDownloadFunction', ['storageHandle'], []],
    ['fileDeleteFunction', ['storageHandle'], []],
  ]
  const functions = body.functions ?? {}
  for (const [field, input, output] of requirements) {
    const functionId = body[field]
    // App-wide functions are checked by the engine when the file operation runs.
    if (functionId === undefined || !Object.hasOwn(functions, functionId)) continue
    const definition = functions[functionId]!
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

export function processBody(body: ProcessModelBody, appFunctions: ReadonlySet<string>): void {
  const path = 'modelBody'
  if (body.input !== undefined) jsonSchema(body.input, child(path, 'input'))
  if (body.businessKey !== undefined) modelExpression(body.businessKey, child(path, 'businessKey'))
  body.inform?.forEach((item, position) => modelExpression(item.header, child(child(child(path, 'inform'), position), 'header')))
  stepReference(body.start, child(path, 'start'), body.steps)

  const localFunctions = body.functions ?? {}
  const functions = new FunctionScope(new Set(Object.keys(localFunctions)), appFunctions)
  const index: ProcessIndex = { steps: body.steps, swimlanes: new Set(Object.keys(body.swimlanes ?? {})), functions }
  for (const [stepId, step] of Object.entries(body.steps)) processStep(step, child(child(path, 'steps'), stepId), index)
  functionMap(localFunctions, child(path, 'functions'), appFunctions)

  for (const [name, functionId] of Object.entries(body.namedFunctions ?? {}))
    functions.reference(functionId, child(child(path, 'namedFunctions'), name))
  for (const field of FILE_FUNCTIONS) {
    const functionId = body[field]
    if (functionId !== undefined) functions.reference(functionId, child(path, field))
  }
  fileFunctionSchemas(body)
  parallelBranches(body.steps)
}
