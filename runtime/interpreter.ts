/**
 * The process interpreter: moves the threads of one instance through the steps of its model
 * (docs/models.md#steps). It works on a private copy of the state and records what happened as effects;
 * automatic steps run until every thread waits at a user task, a join or the end.
 */
import { deepCopy } from '../lib/deep-copy.js'
import { performance } from 'node:perf_hooks'
import { oversizedResult } from '../model/expression-cost.js'
import { afterDuration } from '../model/duration.js'
import { assignAtPath, defineOwn, parseAssignmentPath } from '../model/paths.js'
import type { CompiledExpression, EvaluationScope, ExpressionStore } from './expressions.js'
import { executeFunction, processView } from './flow/execute.js'
import { arriveAtCallProcess, arriveAtReceive, arriveAtTimer, dateTimeOf } from './waits.js'
import type { CompiledFunction } from './flow/compile.js'
import {
  type ActionDefinition,
  type ActionType,
  type DataInstance,
  type ExternalTaskStep,
  type FunctionRunResult,
  type ProcessInstance,
  type ProcessState,
  RuntimeError,
  type RuntimeEffect,
  type RunEnvironment,
  type StepDefinition,
  type Task,
  type Thread,
  type Transition,
  type UserTaskStep,
} from './types.js'

/** The parts of a compiled model the interpreter runs. */
export interface ExecutableModel {
  readonly steps: Readonly<Record<string, StepDefinition>>
  /** Compiled `when` of each switch case, by step id and case index. */
  readonly caseConditions: ReadonlyMap<string, readonly CompiledExpression[]>
  /** Compiled `assignTo` expressions, by step id ('initiator' and 'swimlane' are not expressions). */
  readonly assignees: ReadonlyMap<string, CompiledExpression>
  /** Compiled `dueDate` expressions of user tasks, by step id. */
  readonly dueDates: ReadonlyMap<string, CompiledExpression>
  /** Compiled `userId` expressions of `assignToUser` escalations, by step id and escalation position. */
  readonly escalationAssignees: ReadonlyMap<string, ReadonlyMap<number, CompiledExpression>>
  /** The compiled expression of a step, by step id: a timer's `until`, a receive's `correlate`, a
   * callProcess's `input`, an end's `output`, an external task's `input`. */
  readonly stepExpressions: ReadonlyMap<string, CompiledExpression>
  resolveFunction(functionId: string, env: RunEnvironment): CompiledFunction | undefined
}

/**
 * A transition being made: the state it changes (the instance and its data, its own) and the effects
 * and info messages so far; `finish` stamps the instance and gives the Transition.
 */
export class TransitionInProgress {
  readonly instance: ProcessInstance
  data: DataInstance
  readonly effects: RuntimeEffect[] = []
  readonly infoList: string[] = []

  /** A transition over `ownState` itself, which the caller hands over and does not use again: it is changed in place. */
  constructor(
    ownState: ProcessState,
    private readonly knownUserNames: ReadonlyMap<string, string> = new Map(),
  ) {
    this.instance = ownState.processInstance
    this.data = ownState.dataInstance
  }

  /** A transition over a private copy of `state`: the caller's state is never changed. */
  static of(state: ProcessState): TransitionInProgress {
    return new TransitionInProgress(deepCopy(state))
  }

  nameKnownFor(userId: string): string | undefined {
    return this.knownUserNames.get(userId)
  }

  finish(env: RunEnvironment): Transition {
    this.instance.lastUpdate = env.now().toISOString()
    return { state: { processInstance: this.instance, dataInstance: this.data }, effects: this.effects, infoList: this.infoList }
  }
}

function technical(message: string): RuntimeError {
  return new RuntimeError('technical', message)
}

export function findTask(instance: ProcessInstance, taskId: string): Task {
  const task = instance.tasks.find((candidate) => candidate.taskId === taskId)
  if (!task) throw new RuntimeError('notFound', `task ${taskId} not found`, { target: 'task' })
  return task
}

export function openTask(instance: ProcessInstance, taskId: string): Task {
  const task = findTask(instance, taskId)
  if (task.status !== 'open') throw new RuntimeError('conflict', `task ${taskId} is ${task.status}`, { target: 'task' })
  return task
}

/**
 * The action of a user task: the one with the customType asked for, or, without a customType (or
 * when none carries it), the one without a customType, else the first of the type.
 */
export function chooseAction(step: UserTaskStep, actionType: ActionType, customType: string | undefined): ActionDefinition | undefined {
  const candidates = step.actions.filter((action) => action.actionType === actionType)
  if (customType !== undefined) {
    const exact = candidates.find((action) => action.customType === customType)
    if (exact) return exact
    if (actionType === 'function') return undefined
  }
  return candidates.find((action) => action.customType === undefined) ?? candidates[0]
}

export class Interpreter {
  constructor(private readonly model: ExecutableModel) {}

  userTaskStep(stepId: string): UserTaskStep {
    const step = this.model.steps[stepId]
    if (!step || step.type !== 'userTask') throw new RuntimeError('notFound', `step ${stepId} is not a user task`, { target: 'step' })
    return step
  }

  /** Runs every active thread until each waits at a user task or a join, failed, or the process ended. */
  async advance(transition: TransitionInProgress, env: RunEnvironment): Promise<void> {
    const instance = transition.instance
    let budget = env.limits.maxAutomaticSteps
    for (;;) {
      if (instance.processStatus === 'completed' || instance.processStatus === 'cancelled') return
      const thread = instance.threads.find((candidate) => candidate.status === 'active')
      if (!thread) break
      budget--
      if (budget < 0)
        throw technical(`the process ran more than ${env.limits.maxAutomaticSteps} automatic steps without waiting (a loop in the model?)`)
      await this.executeStep(thread, transition, env)
    }
    instance.processStatus = instance.threads.some((thread) => thread.status === 'failed') ? 'failed' : 'running'
  }

  /**
   * Runs a function in the context of the instance, as part of step `stepId`; the data it changes
   * comes back in the result. The instance's `lastUpdate` is its stored revision (a transition sets
   * it only when it finishes), so a step re-run from the same stored state gets the same idempotency scope.
   */
  runInProcess(
    fn: CompiledFunction,
    instance: ProcessInstance,
    input: unknown,
    data: DataInstance,
    env: RunEnvironment,
    stepId: string,
    task?: Task,
  ): Promise<FunctionRunResult> {
    const { processInstanceId, lastUpdate } = instance
    const request = {
      input,
      data,
      process: processView(instance),
      idempotencyScope: `${processInstanceId}\n${lastUpdate}\n${stepId}`,
      ...(task ? { task } : {}),
    }
    return executeFunction(fn, request, env, (functionId) => this.model.resolveFunction(functionId, env))
  }

  requireFunction(functionId: string, env: RunEnvironment): CompiledFunction {
    const fn = this.model.resolveFunction(functionId, env)
    if (!fn) throw new RuntimeError('notFound', `function ${functionId} not found`, { target: 'function' })
    return fn
  }

  /** Ends a task with the action taken on it. */
  endTask(transition: TransitionInProgress, task: Task, actionType: ActionType, env: RunEnvironment): void {
    task.status = actionType === 'cancel' ? 'cancelled' : 'completed'
    task.completedAt = env.now().toISOString()
    task.completedBy = env.actor.userId
    task.actionType = actionType
    transition.effects.push({ kind: 'taskEnded', task: { ...task } })
  }

  /** Ends the process: open tasks are cancelled, every thread is done. */
  endProcess(transition: TransitionInProgress, status: 'completed' | 'cancelled', env: RunEnvironment): void {
    const instance = transition.instance
    this.cancelOpenTasks(transition, env)
    for (const thread of instance.threads) thread.status = 'done'
    instance.processStatus = status
    transition.effects.push({ kind: 'processEnded', status })
  }

  cancelOpenTasks(transition: TransitionInProgress, env: RunEnvironment): void {
    for (const task of transition.instance.tasks) {
      if (task.status !== 'open') continue
      task.status = 'cancelled'
      task.completedAt = env.now().toISOString()
      transition.effects.push({ kind: 'taskCancelled', task: { ...task } })
    }
  }

  private async executeStep(thread: Thread, transition: TransitionInProgress, env: RunEnvironment): Promise<void> {
    if (thread.join !== undefined && thread.join === thread.stepId) {
      this.arriveAtJoin(thread, transition)
      return
    }
    const step = this.model.steps[thread.stepId]
    if (!step) throw new RuntimeError('notFound', `step ${thread.stepId} not found`, { target: 'step' })
    switch (step.type) {
      case 'userTask':
        await this.createTask(thread, step, transition, env)
        thread.status = 'waiting'
        return
      case 'function':
        await this.runFunctionStep(thread, step.function, step.next, step.onError ?? 'rollback', transition, env)
        return
      case 'switch':
        thread.stepId = await this.chooseCase(thread.stepId, step.default, transition, env)
        return
      case 'parallel':
        thread.status = 'waiting'
        thread.stepId = step.join
        for (const branch of step.branches) {
          transition.instance.threads.push({
            threadId: env.newId(),
            stepId: branch,
            status: 'active',
            parentThreadId: thread.threadId,
            join: step.join,
          })
        }
        return
      case 'join':
        thread.stepId = step.next
        return
      case 'externalTask':
        await this.createExternalTask(thread, step, transition, env)
        return
      case 'end':
        if (step.output !== undefined) transition.instance.output = await this.stepExpression(thread.stepId, transition, env)
        this.endProcess(transition, step.status ?? 'completed', env)
        return
      case 'timer': {
        const until = step.until === undefined ? undefined : await this.stepExpression(thread.stepId, transition, env)
        arriveAtTimer(thread, step, until === undefined ? undefined : dateTimeOf(until, `steps.${thread.stepId}.until`), env)
        return
      }
      case 'receive': {
        const key =
          step.correlate === undefined ? transition.instance.businessKey : await this.stepExpression(thread.stepId, transition, env)
        arriveAtReceive(thread, step, key, env)
        return
      }
      case 'callProcess': {
        const input = await this.stepExpression(thread.stepId, transition, env)
        arriveAtCallProcess(thread, step, input, transition, env, (failing, error) =>
          this.failThread(failing, transition, error, env.now()),
        )
        return
      }
    }
  }

  /** The default retries of an external task whose step gives none. */
  static readonly DEFAULT_EXTERNAL_TASK_RETRIES = 3

  /**
   * The thread waits for a new external task, whose input is the step's `input` evaluated like any
   * expression of the model (node budget, result size caps), or a copy of the dataInstance.
   */
  private async createExternalTask(thread: Thread, step: ExternalTaskStep, transition: TransitionInProgress, env: RunEnvironment) {
    const input = this.model.stepExpressions.has(thread.stepId)
      ? await this.stepExpression(thread.stepId, transition, env)
      : deepCopy(transition.data)
    const externalTaskId = env.newId()
    thread.status = 'waiting'
    thread.externalTaskId = externalTaskId
    transition.effects.push({
      kind: 'externalTaskCreated',
      externalTask: {
        externalTaskId,
        threadId: thread.threadId,
        stepId: thread.stepId,
        topic: step.topic,
        input: input ?? null,
        retries: step.retries ?? Interpreter.DEFAULT_EXTERNAL_TASK_RETRIES,
      },
    })
  }

  /** The thread waiting for the external task, and its step (404 `externalTask` when no thread waits for it). */
  externalTaskWait(transition: TransitionInProgress, externalTaskId: string): { thread: Thread; step: ExternalTaskStep } {
    const thread = transition.instance.threads.find(
      (candidate) => candidate.status === 'waiting' && candidate.externalTaskId === externalTaskId,
    )
    const step = thread ? this.model.steps[thread.stepId] : undefined
    if (!thread || step?.type !== 'externalTask') {
      throw new RuntimeError('notFound', `no thread waits for external task ${externalTaskId}`, { target: 'externalTask' })
    }
    return { thread, step }
  }

  /** The worker's output lands at `as`, or (an object) is merged into the dataInstance; the thread goes on. */
  completeExternalTask(transition: TransitionInProgress, externalTaskId: string, output: unknown): void {
    const { thread, step } = this.externalTaskWait(transition, externalTaskId)
    if (step.as !== undefined) {
      assignAtPath(
        { data: transition.data, output: {}, vars: {} },
        parseAssignmentPath(step.as, `steps.${thread.stepId}.as`),
        output ?? null,
      )
    } else if (output !== undefined && output !== null) {
      if (typeof output !== 'object' || Array.isArray(output)) {
        throw new RuntimeError('validation', `steps.${thread.stepId} has no "as": the output must be an object to merge into the data`, {
          path: 'output',
        })
      }
      for (const [key, value] of Object.entries(output)) defineOwn(transition.data, key, value)
    }
    delete thread.externalTaskId
    thread.stepId = step.next
    thread.status = 'active'
  }

  /** The external task's last failure: the thread fails with the worker's message until `retry` re-runs the step. */
  failExternalTask(transition: TransitionInProgress, externalTaskId: string, errorMessage: string, now: Date): void {
    const { thread } = this.externalTaskWait(transition, externalTaskId)
    delete thread.externalTaskId
    this.failThread(thread, transition, { message: errorMessage, code: 'EXTERNAL_TASK_FAILED' }, now)
  }

  private async stepExpression(stepId: string, transition: TransitionInProgress, env: RunEnvironment): Promise<unknown> {
    const expression = this.model.stepExpressions.get(stepId)
    if (!expression) throw technical(`step ${stepId} has no compiled expression`)
    return expression.evaluate(this.store(transition, env), expressionScope(env))
  }

  /** The thread fails at its step (`retry` runs the step again); so does the process. */
  failThread(thread: Thread, transition: TransitionInProgress, error: { message: string; code?: string }, now: Date): void {
    thread.status = 'failed'
    thread.error = { message: error.message, ...(error.code === undefined ? {} : { code: error.code }) }
    thread.failedAt = now.toISOString()
    transition.instance.processStatus = 'failed'
    transition.effects.push({ kind: 'threadFailed', thread: { ...thread } })
  }

  /** A branch thread reached its join: once every branch of its parallel has, the parent goes on. */
  private arriveAtJoin(thread: Thread, transition: TransitionInProgress): void {
    thread.status = 'done'
    const instance = transition.instance
    const siblings = instance.threads.filter(
      (candidate) => candidate.parentThreadId === thread.parentThreadId && candidate.join === thread.join,
    )
    if (siblings.some((sibling) => sibling.status !== 'done')) return
    const parent = instance.threads.find((candidate) => candidate.threadId === thread.parentThreadId)
    if (!parent) throw technical(`thread ${thread.threadId} has no parent thread ${thread.parentThreadId ?? ''}`)
    // The branches have done their work; the parent carries the process on from the join.
    instance.threads = instance.threads.filter((candidate) => !siblings.includes(candidate))
    parent.status = 'active'
  }

  private async runFunctionStep(
    thread: Thread,
    functionId: string,
    next: string,
    onError: 'rollback' | 'fail',
    transition: TransitionInProgress,
    env: RunEnvironment,
  ): Promise<void> {
    const mark = env.savepoints?.mark()
    try {
      const fn = this.requireFunction(functionId, env)
      const result = await this.runInProcess(fn, transition.instance, {}, transition.data, env, thread.stepId)
      transition.data = result.dataInstance
      transition.infoList.push(...result.infoList)
      thread.stepId = next
      delete thread.error
      delete thread.failedAt
    } catch (error) {
      // A request's budget that ran out ends the request: a failed thread would store what it was stopped for.
      if (onError === 'rollback' || !(error instanceof RuntimeError) || error.kind === 'limit') throw error
      // The thread fails and the request goes on: the failed step's data writes must not be stored.
      if (mark !== undefined) env.savepoints?.discardSince(mark)
      this.failThread(
        thread,
        transition,
        { message: error.message, ...(error.details.code === undefined ? {} : { code: error.details.code }) },
        env.now(),
      )
    }
  }

  /**
   * Applies escalation `position` of an open task's step that does not end it (notify, assign to a
   * swimlane's pool, assign to a user) and marks it as run on the task. `action` escalations end
   * the task through the engine's action path instead.
   */
  async escalate(transition: TransitionInProgress, task: Task, position: number, env: RunEnvironment): Promise<void> {
    const step = this.userTaskStep(task.stepId)
    const escalation = step.escalations?.[position]
    if (!escalation || escalation.do === 'action') {
      throw technical(`steps.${task.stepId}.escalations[${position}] is not an escalation that keeps the task open`)
    }
    if (escalation.do === 'assignToSwimlane' && escalation.swimlane !== undefined) {
      delete task.userId
      delete task.userName
      task.swimlane = escalation.swimlane
    }
    if (escalation.do === 'assignToUser') {
      const expression = this.model.escalationAssignees.get(task.stepId)?.get(position)
      const userId = expression ? await expression.evaluate(this.store(transition, env), expressionScope(env)) : undefined
      const location = `steps.${task.stepId}.escalations[${position}].userId`
      if (typeof userId !== 'string' || userId === '') {
        throw technical(`${location} must give a userId, not ${JSON.stringify(userId ?? null)}`)
      }
      task.userName = await this.nameOf(userId, location, transition, env)
      task.userId = userId
      // As with any assignment, the assignee keeps seeing the process (docs/reference/instances.md#contributors).
      if (!transition.instance.contributorUsers.includes(userId)) transition.instance.contributorUsers.push(userId)
    }
    task.escalated = [...(task.escalated ?? []), position]
  }

  private store(transition: TransitionInProgress, env: RunEnvironment): ExpressionStore {
    return { input: {}, data: transition.data, process: processView(transition.instance), user: env.actor }
  }

  private async chooseCase(stepId: string, fallback: string, transition: TransitionInProgress, env: RunEnvironment): Promise<string> {
    const step = this.model.steps[stepId]
    if (step?.type !== 'switch') return fallback
    const conditions = this.model.caseConditions.get(stepId) ?? []
    const store = this.store(transition, env)
    const scope = expressionScope(env)
    for (const [index, condition] of conditions.entries()) {
      if (await condition.evaluate(store, scope)) return (step.cases[index] as { next: string }).next
    }
    return fallback
  }

  private async createTask(thread: Thread, step: UserTaskStep, transition: TransitionInProgress, env: RunEnvironment): Promise<void> {
    const task: Task = {
      taskId: env.newId(),
      stepId: thread.stepId,
      name: step.name,
      status: 'open',
      threadId: thread.threadId,
      swimlane: step.swimlane,
      createdAt: env.now().toISOString(),
      ...(await this.dueDateOf(thread.stepId, step, transition, env)),
      ...(step.form === undefined ? {} : { form: step.form }),
      ...(step.preForms === undefined ? {} : { preForms: [...step.preForms] }),
      ...(await this.assigneeOf(thread.stepId, step, transition, env)),
    }
    transition.instance.tasks.push(task)
    transition.effects.push({ kind: 'taskCreated', task: { ...task } })
  }

  /** The task's due date: `dueIn` after now, or what the `dueDate` expression gives (a date-time). */
  private async dueDateOf(
    stepId: string,
    step: UserTaskStep,
    transition: TransitionInProgress,
    env: RunEnvironment,
  ): Promise<{ dueDate?: string }> {
    if (step.dueIn !== undefined) return { dueDate: afterDuration(env.now(), step.dueIn).toISOString() }
    const expression = this.model.dueDates.get(stepId)
    if (!expression) return {}
    const value = await expression.evaluate(this.store(transition, env), expressionScope(env))
    if (value === undefined || value === null || value === '') return {}
    return { dueDate: dateTimeOf(value, `steps.${stepId}.dueDate`).toISOString() }
  }

  private async assigneeOf(
    stepId: string,
    step: UserTaskStep,
    transition: TransitionInProgress,
    env: RunEnvironment,
  ): Promise<{ userId?: string; userName?: string }> {
    const assignTo = step.assignTo ?? 'swimlane'
    if (assignTo === 'swimlane') return {}
    let userId: string
    if (assignTo === 'initiator') userId = transition.instance.initiator
    else {
      const expression = this.model.assignees.get(stepId)
      const value = expression ? await expression.evaluate(this.store(transition, env), expressionScope(env)) : undefined
      if (value === undefined || value === null || value === '') return {}
      if (typeof value !== 'string') throw technical(`steps.${stepId}.assignTo must give a userId, not ${JSON.stringify(value)}`)
      userId = value
    }
    return { userId, userName: await this.nameOf(userId, `steps.${stepId}.assignTo`, transition, env) }
  }

  /** `location`: where in the model the user was named (`steps.approve.assignTo`), for the error. */
  private async nameOf(userId: string, location: string, transition: TransitionInProgress, env: RunEnvironment): Promise<string> {
    if (env.actor.userId === userId) return env.actor.fullName
    const known = transition.nameKnownFor(userId)
    if (known !== undefined) return known
    const user = await env.host.findUser(userId)
    if (!user) throw technical(`${location} names user ${userId}, who does not exist`)
    return user.fullName
  }
}

/**
 * The scope of an expression evaluated outside a flow function (switch, assignTo, businessKey,
 * inform). These run on the engine's own thread, so besides the run limit they have a small budget
 * of evaluated nodes (`limits.expressionNodes`): a runaway condition fails after milliseconds of
 * work instead of holding every other request. Nodes, not wall-clock time, because an evaluation
 * interleaves with other requests: its wall-clock time says nothing of the thread it holds. A node
 * whose result is too large (expression-cost.ts) fails it too, before a builtin spends long on it.
 */
export function expressionScope(env: RunEnvironment): EvaluationScope {
  const deadline = performance.now() + env.limits.timeoutMs
  let nodesLeft = env.limits.expressionNodes
  return {
    constant: (name) => env.host.constant(name),
    uuid: () => env.newId(),
    checkDeadline: () => {
      if (--nodesLeft < 0) throw technical(`an expression evaluated more than ${env.limits.expressionNodes} nodes`)
      if (performance.now() > deadline) throw technical(`an expression ran longer than ${env.limits.timeoutMs} ms`)
    },
    checkResult: (value) => {
      const oversized = oversizedResult(value)
      if (oversized) throw technical(`an expression produced ${oversized}, more than an expression of a model may`)
    },
  }
}
