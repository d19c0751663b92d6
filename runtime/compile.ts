/**
 * Compiles a process model version into a CompiledProcess (types.ts): the input schema, every
 * expression (businessKey, switch cases, assignTo, inform) and every local function, once. The
 * engine keeps the result in its `app` cache; the compiled functions go to the `service` cache it
 * passes in. A model is assumed to have passed validateModel on insert.
 */
import { deepCopy } from '../lib/deep-copy.js'
import { type CompiledExpression, compileExpression } from './expressions.js'
import { type CompiledFunction, type FunctionCache, FunctionCompiler } from './flow/compile.js'
import { executeFunction, processView } from './flow/execute.js'
import { checkInput as checkInputWhereCheapest } from './flow/input-check.js'
import { chooseAction, expressionScope, Interpreter, openTask, findTask, TransitionInProgress } from './interpreter.js'
import { moveOnChild, moveOnMessage, moveOnTimer, waitingThread } from './waits.js'
import { compileSchema } from './schemas.js'
import {
  type ActionFunctionRequest,
  type ActRequest,
  type CompiledProcess,
  type DataInstance,
  type FlowFunctionDefinition,
  type FunctionRequest,
  type FunctionRunResult,
  type InformItem,
  type JsonObject,
  type ProcessInstance,
  type ProcessModelBody,
  type ProcessState,
  type ProcessStatus,
  RuntimeError,
  type RunEnvironment,
  type StartRequest,
  type StepDefinition,
  type Thread,
  type Transition,
  type WorkflowModel,
} from './types.js'
import { withFields } from '../lib/with-fields.js'

export interface CompileOptions {
  /** Where compiled functions are kept (the engine's `service` cache); private when absent. */
  functionCache?: FunctionCache
}

const NOT_EXPRESSIONS = new Set(['initiator', 'swimlane'])

function textOf(value: unknown): string {
  if (value === undefined || value === null) return ''
  return typeof value === 'string' ? value : JSON.stringify(value)
}

/** The one expression a step of these types has, and its field. */
function stepExpressionOf(step: StepDefinition): { source: string; field: string } | undefined {
  if (step.type === 'timer' && step.until !== undefined) return { source: step.until, field: 'until' }
  if (step.type === 'receive' && step.correlate !== undefined) return { source: step.correlate, field: 'correlate' }
  if (step.type === 'callProcess') return { source: step.input, field: 'input' }
  if (step.type === 'end' && step.output !== undefined) return { source: step.output, field: 'output' }
  if (step.type === 'externalTask' && step.input !== undefined) return { source: step.input, field: 'input' }
  return undefined
}

/** Resolves function ids: the process's own first, then the app's libraries (through the host). */
function functionResolver(local: ReadonlyMap<string, CompiledFunction>, compiler: FunctionCompiler) {
  return (functionId: string, env: RunEnvironment): CompiledFunction | undefined => {
    const own = local.get(functionId)
    if (own) return own
    const definition = env.host.appFunction(functionId)
    return definition ? compiler.compile(functionId, definition) : undefined
  }
}

export function compileProcess(model: WorkflowModel<ProcessModelBody>, options: CompileOptions = {}): CompiledProcess {
  const body = model.modelBody
  const compiler = new FunctionCompiler(options.functionCache)
  const localFunctions = new Map(
    Object.entries(body.functions ?? {}).map(([functionId, definition]) => [functionId, compiler.compile(functionId, definition)]),
  )
  const resolveFunction = functionResolver(localFunctions, compiler)

  const caseConditions = new Map<string, CompiledExpression[]>()
  const assignees = new Map<string, CompiledExpression>()
  const dueDates = new Map<string, CompiledExpression>()
  const escalationAssignees = new Map<string, Map<number, CompiledExpression>>()
  const stepExpressions = new Map<string, CompiledExpression>()
  for (const [stepId, step] of Object.entries(body.steps)) {
    const own = stepExpressionOf(step)
    if (own) stepExpressions.set(stepId, compileExpression(own.source, `steps.${stepId}.${own.field}`))
    if (step.type === 'switch')
      caseConditions.set(
        stepId,
        step.cases.map((entry, index) => compileExpression(entry.when, `steps.${stepId}.cases[${index}].when`)),
      )
    if (step.type !== 'userTask') continue
    if (step.assignTo !== undefined && !NOT_EXPRESSIONS.has(step.assignTo)) {
      assignees.set(stepId, compileExpression(step.assignTo, `steps.${stepId}.assignTo`))
    }
    if (step.dueDate !== undefined) dueDates.set(stepId, compileExpression(step.dueDate, `steps.${stepId}.dueDate`))
    const escalationUsers = new Map<number, CompiledExpression>()
    ;(step.escalations ?? []).forEach((escalation, position) => {
      if (escalation.userId === undefined) return
      escalationUsers.set(position, compileExpression(escalation.userId, `steps.${stepId}.escalations[${position}].userId`))
    })
    if (escalationUsers.size > 0) escalationAssignees.set(stepId, escalationUsers)
  }
  const businessKey = body.businessKey === undefined ? undefined : compileExpression(body.businessKey, 'businessKey')
  const inform = (body.inform ?? []).map((item, index) => ({ item, header: compileExpression(item.header, `inform[${index}].header`) }))
  const checkInput = compileSchema(body.input)
  const interpreter = new Interpreter({
    steps: body.steps,
    caseConditions,
    assignees,
    dueDates,
    escalationAssignees,
    stepExpressions,
    resolveFunction,
  })

  const processId = body.processId ?? model.modelID
  const processName = body.name ?? model.name ?? processId

  async function businessKeyOf(request: StartRequest, env: RunEnvironment): Promise<string> {
    if (request.businessKey !== undefined) return request.businessKey
    if (!businessKey) return env.newId()
    const key = await businessKey.evaluate({ input: request.input, user: request.initiator }, expressionScope(env))
    if (key === undefined || key === null || key === '')
      throw new RuntimeError('technical', 'businessKey gave no value', { path: 'businessKey' })
    return textOf(key)
  }

  /**
   * Takes a waiting thread off its wait (`move`, which answers whether it goes on) and runs the
   * instance until it waits again. The event happened, whatever comes after it: when a later step
   * fails (a function with `onError: "rollback"`, an expression), the thread fails at that step,
   * with the event's changes kept and the failed run's data writes discarded, an incident `retry`
   * picks up, rather than the event being lost or tried again forever.
   */
  async function resumeWaitingThread(
    state: ProcessState,
    threadId: string,
    env: RunEnvironment,
    move: (transition: TransitionInProgress, thread: Thread) => boolean,
  ): Promise<Transition> {
    const transition = TransitionInProgress.of(state)
    const thread = waitingThread(transition, threadId)
    if (!move(transition, thread)) return transition.finish(env)
    const moved = {
      state: deepCopy({ processInstance: transition.instance, dataInstance: transition.data }),
      effects: [...transition.effects],
    }
    const mark = env.savepoints?.mark()
    try {
      await interpreter.advance(transition, env)
      return transition.finish(env)
    } catch (error) {
      if (!(error instanceof RuntimeError) || error.kind === 'limit') throw error
      if (mark !== undefined) env.savepoints?.discardSince(mark)
      // The copy taken after the move is used once: the fallback's own.
      const fallback = new TransitionInProgress(moved.state)
      fallback.effects.push(...moved.effects)
      const failing = fallback.instance.threads.find((candidate) => candidate.threadId === threadId)
      if (!failing) throw error
      interpreter.failThread(
        failing,
        fallback,
        { message: error.message, ...(error.details.code === undefined ? {} : { code: error.details.code }) },
        env.now(),
      )
      return fallback.finish(env)
    }
  }

  async function runFunction(functionId: string, request: FunctionRequest, env: RunEnvironment): Promise<FunctionRunResult> {
    const fn = interpreter.requireFunction(functionId, env)
    if (!request.state) return executeFunction(fn, { input: request.input }, env, (id) => resolveFunction(id, env))
    // The run changes nothing of the state: it sees the instance through a frozen view, and its data
    // and task as copies of its own (executeFunction copies the data), so the state needs no copy.
    const { processInstance, dataInstance } = request.state
    const task = request.taskId === undefined ? undefined : deepCopy(findTask(processInstance, request.taskId))
    return interpreter.runInProcess(fn, processInstance, request.input, dataInstance, env, task?.stepId ?? `function:${functionId}`, task)
  }

  return {
    model,
    processId,
    processName,
    swimlanes: body.swimlanes ?? {},

    validateInput: (input, env) => checkInputWhereCheapest(body.input, checkInput, input, env),
    step: (stepId) => (Object.hasOwn(body.steps, stepId) ? body.steps[stepId] : undefined),
    namedFunction: (name) => body.namedFunctions?.[name],
    fileFunction: (kind) =>
      ({ upload: body.fileUploadFunction, download: body.fileDownloadFunction, delete: body.fileDeleteFunction })[kind],

    async start(request, env) {
      const now = env.now().toISOString()
      const instance: ProcessInstance = {
        processInstanceId: request.processInstanceId,
        processId,
        processName,
        businessKey: await businessKeyOf(request, env),
        appId: request.appId,
        organizationId: request.organizationId,
        modelVersion: model.version,
        processStatus: 'running',
        initiator: request.initiator.userId,
        processStart: now,
        lastUpdate: now,
        tasks: [],
        notes: [],
        files: [],
        contributorUsers: [],
        threads: [{ threadId: env.newId(), stepId: body.start, status: 'active' }],
        ...(request.parent ? { parentInstance: { ...request.parent } } : {}),
      }
      // The instance is new: the transition takes it as it is, and a copy of the caller's input.
      const transition = new TransitionInProgress(
        { processInstance: instance, dataInstance: deepCopy(request.input) },
        new Map([[request.initiator.userId, request.initiator.fullName]]),
      )
      await interpreter.advance(transition, env)
      return transition.finish(env)
    },

    async act(state: ProcessState, request: ActRequest, env: RunEnvironment): Promise<Transition> {
      // The data the request brings replaces the stored data: only the one kept is copied.
      const kept = request.dataInstance !== undefined ? request.dataInstance : state.dataInstance
      const transition = TransitionInProgress.of({ processInstance: state.processInstance, dataInstance: kept })
      const task = openTask(transition.instance, request.taskId)
      const step = interpreter.userTaskStep(task.stepId)
      const action = chooseAction(step, request.actionType, request.customType)
      if (!action) {
        throw new RuntimeError(
          'notFound',
          `step ${task.stepId} has no ${request.actionType} action${request.customType ? ` "${request.customType}"` : ''}`,
          { target: 'action' },
        )
      }
      if (action.function !== undefined) {
        const fn = interpreter.requireFunction(action.function, env)
        const result = await interpreter.runInProcess(fn, transition.instance, transition.data, transition.data, env, task.stepId, task)
        transition.data = result.dataInstance
        transition.infoList.push(...result.infoList)
      }
      interpreter.endTask(transition, task, request.actionType, env)
      const thread = transition.instance.threads.find((candidate) => candidate.threadId === task.threadId)
      if (!thread) throw new RuntimeError('technical', `task ${task.taskId} belongs to no thread`)
      if (action.next !== undefined) {
        thread.stepId = action.next
        thread.status = 'active'
      } else if (request.actionType === 'cancel') {
        interpreter.endProcess(transition, 'cancelled', env)
      } else {
        thread.status = 'done'
        if (transition.instance.threads.every((candidate) => candidate.status === 'done'))
          interpreter.endProcess(transition, 'completed', env)
      }
      await interpreter.advance(transition, env)
      return transition.finish(env)
    },

    async runActionFunction(state: ProcessState, request: ActionFunctionRequest, env: RunEnvironment) {
      const transition = TransitionInProgress.of(state)
      const task = openTask(transition.instance, request.taskId)
      const action = chooseAction(interpreter.userTaskStep(task.stepId), 'function', request.customType)
      if (!action?.function) {
        throw new RuntimeError(
          'notFound',
          `step ${task.stepId} has no function action${request.customType ? ` "${request.customType}"` : ''}`,
          { target: 'action' },
        )
      }
      const fn = interpreter.requireFunction(action.function, env)
      const formData = deepCopy(request.dataInstance)
      const result = await interpreter.runInProcess(fn, transition.instance, formData, formData, env, task.stepId, task)
      transition.data = result.dataInstance
      transition.infoList.push(...result.infoList)
      return withFields(transition.finish(env), { output: result.output })
    },

    runFunction,

    async escalate(state: ProcessState, taskId: string, position: number, env: RunEnvironment): Promise<Transition> {
      const transition = TransitionInProgress.of(state)
      await interpreter.escalate(transition, openTask(transition.instance, taskId), position, env)
      return transition.finish(env)
    },

    async completeExternalTask(state: ProcessState, externalTaskId: string, output: unknown, env: RunEnvironment): Promise<Transition> {
      const transition = TransitionInProgress.of(state)
      interpreter.completeExternalTask(transition, externalTaskId, output)
      await interpreter.advance(transition, env)
      return transition.finish(env)
    },

    async failExternalTask(state: ProcessState, externalTaskId: string, errorMessage: string, env: RunEnvironment): Promise<Transition> {
      const transition = TransitionInProgress.of(state)
      interpreter.failExternalTask(transition, externalTaskId, errorMessage, env.now())
      return transition.finish(env)
    },

    fireTimer: (state, threadId, timerId, env) =>
      resumeWaitingThread(state, threadId, env, (transition, thread) => {
        moveOnTimer(transition, thread, body.steps[thread.stepId], timerId)
        return true
      }),

    deliverMessage: (state, threadId, subscriptionId, variables, env) =>
      resumeWaitingThread(state, threadId, env, (transition, thread) => {
        moveOnMessage(transition, thread, body.steps[thread.stepId], subscriptionId, variables)
        return true
      }),

    returnFromChild: (state, threadId, outcome, env) =>
      resumeWaitingThread(state, threadId, env, (transition, thread) =>
        moveOnChild(transition, thread, body.steps[thread.stepId], outcome, (failing, error) =>
          interpreter.failThread(failing, transition, error, env.now()),
        ),
      ),

    async retry(state: ProcessState, threadId: string, env: RunEnvironment): Promise<Transition> {
      const transition = TransitionInProgress.of(state)
      const thread = transition.instance.threads.find((candidate) => candidate.threadId === threadId)
      if (!thread || thread.status !== 'failed') throw new RuntimeError('notFound', `no failed thread ${threadId}`, { target: 'thread' })
      thread.status = 'active'
      thread.retries = (thread.retries ?? 0) + 1
      delete thread.error
      delete thread.failedAt
      await interpreter.advance(transition, env)
      return transition.finish(env)
    },

    async changeStep(
      state: ProcessState,
      stepId: string,
      request: { dataInstance?: DataInstance; status?: ProcessStatus },
      env: RunEnvironment,
    ): Promise<Transition> {
      if (!Object.hasOwn(body.steps, stepId)) throw new RuntimeError('notFound', `step ${stepId} not found`, { target: 'step' })
      const transition = TransitionInProgress.of(state)
      interpreter.cancelOpenTasks(transition, env)
      if (request.dataInstance !== undefined) transition.data = deepCopy(request.dataInstance)
      const status = request.status ?? 'running'
      const thread = {
        threadId: env.newId(),
        stepId,
        status: status === 'running' ? 'active' : status === 'failed' ? 'failed' : 'done',
      } as const
      transition.instance.threads = [{ ...thread }]
      transition.instance.processStatus = status
      if (status === 'running') await interpreter.advance(transition, env)
      return transition.finish(env)
    },

    async inform(state: ProcessState, env: RunEnvironment): Promise<InformItem[]> {
      const store = { input: {}, data: state.dataInstance, process: processView(state.processInstance), user: env.actor }
      const scope = expressionScope(env)
      return Promise.all(
        inform.map(async ({ item, header }) => {
          const text = textOf(await header.evaluate(store, scope))
          // Field by field, in this order: a literal that opens with a spread takes V8's slow path for
          // every field after it, on every change stored (lib/with-fields.ts).
          const entry: Partial<InformItem> = {}
          if (item.key !== undefined) entry.key = item.key
          if (item.label !== undefined) entry.label = item.label
          entry.header = text
          if (item.display !== undefined) entry.display = item.display
          return entry as InformItem
        }),
      )
    },
  }
}

/**
 * Runs an app-wide function on its own, outside any process (`/external/function/:id/execute`
 * standalone mode, scheduled `runFunction` jobs): no `data`, `process` or `task` in its store.
 */
export function runStandaloneFunction(
  functionId: string,
  definition: FlowFunctionDefinition,
  input: JsonObject,
  env: RunEnvironment,
  options: CompileOptions = {},
): Promise<FunctionRunResult> {
  const compiler = new FunctionCompiler(options.functionCache)
  const resolve = functionResolver(new Map([[functionId, compiler.compile(functionId, definition)]]), compiler)
  return executeFunction(compiler.compile(functionId, definition), { input }, env, (id) => resolve(id, env))
}
