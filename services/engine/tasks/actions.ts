/**
 * The actions of an open task: complete / cancel / return (`/action/complete`), save, function
 * actions, and the retry of a failed thread. Each computes the new state with the runtime from the
 * stored one, then commits it with a compare-and-set (so of two concurrent completions of a task
 * exactly one succeeds) and only then touches locks, activity and notification.
 */
import type {
  CompleteActionRequest,
  FunctionActionRequest,
  NotificationEventType,
  RetryActionRequest,
  SaveActionRequest,
  Session,
} from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { type Authorization, mayActOnTask } from '../instances/authorization.js'
import type { SessionBuilder } from './session.js'
import { taskForForm } from '../tasks/form-task.js'
import { newNote, withNote } from '../../../runtime/notes.js'
import type { ActivityEntry, ProcessInstances } from '../instances/service.js'
import { type RequestEnvironment, runtimeUserOf, type RunEnvironments } from '../flow-host/environment.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import { commitChange } from '../instances/loaded-instance-operations.js'
import { type AdditionalHeaders, type LoadedInstance, stateOf } from '../instances/loaded-instance.js'
import type { TaskLockRepository } from './locks.js'
import type { ProcessModels } from '../models/service.js'
import type { CompiledProcess, ProcessState, RuntimeEffect, Task, Transition } from '../../../runtime/types.js'
import type { StoredContext } from '../../../store/collections.js'

/** An open task of a loaded instance: what ending it works on. */
export interface LoadedTask extends LoadedInstance {
  task: Task
}

/** An open task the user may work on now, with what acting on it needs. */
interface ActionableTask extends LoadedTask {
  /** The user holding the task's lock: the actor or nobody (anyone else was refused). */
  lockHolder: string | null
}

export interface ActionServiceDependencies {
  models: ProcessModels
  instances: ProcessInstances
  environments: RunEnvironments
  authorization: Authorization
  locks: TaskLockRepository
  sessions: SessionBuilder
  fail: ErrorFactory<EngineErrorCode>
}

function createdTasks(effects: readonly RuntimeEffect[]): Task[] {
  return effects.flatMap((effect) => (effect.kind === 'taskCreated' ? [effect.task] : []))
}

/**
 * The model's `userTaskActivity` named function, run on the new state after a complete or save
 * (the headless task action too).
 */
export async function runUserTaskActivity(
  fail: ErrorFactory<EngineErrorCode>,
  compiled: CompiledProcess,
  state: ProcessState,
  actionType: string,
  task: Task,
  env: RequestEnvironment,
): Promise<ProcessState> {
  const functionId = compiled.namedFunction('userTaskActivity')
  if (!functionId) return state
  const result = await runtimeCall(fail, 'advance', () =>
    compiled.runFunction(functionId, { state, input: { actionType, taskId: task.taskId, stepId: task.stepId }, taskId: task.taskId }, env),
  )
  return { processInstance: state.processInstance, dataInstance: result.dataInstance }
}

/**
 * What ending a task takes besides the task; the UI's `/action/complete`, the headless task action
 * and an escalation's action use it.
 */
export interface TaskEnding {
  actor: Actor
  actionType: 'complete' | 'cancel' | 'return'
  /** What the request asks along with the action (its body): a custom type, the new data. */
  request?: { customType?: string | undefined; dataInstance?: ProcessState['dataInstance'] | undefined }
  /** The `activityDescription` note to add with the action. */
  note?: string | undefined
  /** Details of the activity record beyond the customType. */
  details?: Record<string, unknown>
  /** The notification event of the change (default `TaskCompleted`; an escalation's `Escalated`). */
  event?: NotificationEventType
  /** Activity records to store with the action's own (an escalation's `escalated`). */
  activities?: ActivityEntry[]
}

/**
 * Ends a task: the runtime's action, the `userTaskActivity` function, the optional note, one
 * compare-and-set commit with its activity, its notification and the release of the task's lock,
 * and then whatever `alongside` writes (the next task's lock).
 */
export async function endTask<Alongside = undefined>(
  deps: Pick<ActionServiceDependencies, 'instances' | 'locks' | 'fail'>,
  loaded: LoadedTask,
  ending: TaskEnding,
  alongside?: (stored: StoredContext, effects: readonly RuntimeEffect[]) => Promise<Alongside>,
): Promise<{ committed: StoredContext; effects: RuntimeEffect[]; alongside: Alongside | undefined }> {
  const { stored, task, compiled, env } = loaded
  const { actor, actionType, note } = ending
  const { customType, dataInstance } = ending.request ?? {}
  const transition = await runtimeCall(deps.fail, 'advance', () =>
    compiled.act(
      stateOf(stored),
      { taskId: task.taskId, actionType, ...(dataInstance ? { dataInstance } : {}), ...(customType ? { customType } : {}) },
      env,
    ),
  )
  let state = await runUserTaskActivity(deps.fail, compiled, transition.state, actionType, task, env)
  if (note) state = withNote(state, newNote(env.newId(), note, actor, env.now(), task.taskId))
  let alongsideResult: Alongside | undefined
  const committed = await commitChange(deps, loaded, actor, {
    state,
    effects: transition.effects,
    event: ending.event ?? 'TaskCompleted',
    activities: [
      {
        type: actionType,
        taskId: task.taskId,
        stepId: task.stepId,
        details: { ...ending.details, ...(customType ? { customType } : {}), ...(note ? { activityDescription: note } : {}) },
      },
      ...(ending.activities ?? []),
    ],
    // The task has ended: a lock someone still held on it means nothing any more, and goes with it.
    writes: [deps.locks.taskRelease(task.taskId)],
    ...(alongside
      ? {
          alongside: async (stored: StoredContext) => {
            alongsideResult = await alongside(stored, transition.effects)
          },
        }
      : {}),
  })
  return { committed, effects: transition.effects, alongside: alongsideResult }
}

/**
 * Re-executes the failed step of a failed thread of an instance the caller may act on (404 wm3080
 * when the thread is not there or not failed) and commits it: `/action/retry` and bulk retries.
 */
export async function retryFailedThread(
  deps: Pick<ActionServiceDependencies, 'instances' | 'models' | 'environments' | 'fail'>,
  actor: Actor,
  stored: StoredContext,
  threadId: string,
  additionalHeaders: AdditionalHeaders,
): Promise<{ committed: StoredContext; compiled: CompiledProcess; transition: Transition }> {
  const { models, environments, fail } = deps
  const thread = stored.processInstance.threads.find((candidate) => candidate.threadId === threadId)
  if (!thread || thread.status !== 'failed') {
    throw fail('wm3080', { args: [threadId], parameters: { threadId, processInstanceId: stored._id } })
  }
  const compiled = await models.ofInstance(stored.processInstance)
  const { appId, organizationId } = stored
  const env = await environments.create({ actor: runtimeUserOf(actor), appId, organizationId, additionalHeaders })
  const transition = await runtimeCall(fail, 'advance', () => compiled.retry(stateOf(stored), thread.threadId, env))
  const committed = await commitChange(deps, { stored, compiled, env }, actor, {
    state: transition.state,
    effects: transition.effects,
    event: 'Updated',
    activities: [{ type: 'retry', stepId: thread.stepId, details: { threadId: thread.threadId } }],
  })
  return { committed, compiled, transition }
}

export class ActionService {
  constructor(private readonly deps: ActionServiceDependencies) {}

  async complete(actor: Actor, body: CompleteActionRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    const { locks, sessions, fail } = this.deps
    const actionType = body.actionType
    if (actionType === 'function') {
      throw fail('wm3110', {
        args: ['function actions run through /action/function, they do not end the task'],
        parameters: { field: 'body.actionType' },
      })
    }
    const loaded = await this.actionableTask(actor, body.processInstanceId, body.taskId, additionalHeaders)
    const { task, compiled, env } = loaded
    // The next task opens for the user; locked for them when they started the process (the
    // "original form owner") and may work on it.
    const openNextTask = async (
      committed: StoredContext,
      effects: readonly RuntimeEffect[],
    ): Promise<{ next?: Task; lockHolder?: string }> => {
      const created = createdTasks(effects)
      const next = taskForForm(committed.processInstance, actor, created)
      if (
        !next ||
        !created.some((task) => task.taskId === next.taskId) ||
        committed.initiator !== actor.userId ||
        !mayActOnTask(actor, next)
      )
        return next ? { next } : {}
      const outcome = await locks.acquire(next.taskId, committed._id, actor.userId, env.now())
      return { next, lockHolder: outcome.acquired ? outcome.lock.userId : outcome.holder.userId }
    }
    const { committed, alongside: opened } = await endTask(
      this.deps,
      loaded,
      { actor, actionType, request: body, note: body.additionalInfo?.activityDescription },
      openNextTask,
    )
    const { next, lockHolder } = opened ?? {}
    return sessions.build({
      principal: actor,
      state: committed,
      compiled,
      task: next,
      skipToForm: true,
      action: { actionType, taskId: task.taskId, ...(body.customType ? { customType: body.customType } : {}) },
      ...(lockHolder !== undefined ? { lockHolder } : {}),
    })
  }

  async save(actor: Actor, body: SaveActionRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    const loaded = await this.actionableTask(actor, body.processInstanceId, body.taskId, additionalHeaders)
    const { stored, task, compiled, env } = loaded
    const state = await runUserTaskActivity(
      this.deps.fail,
      compiled,
      { processInstance: stored.processInstance, dataInstance: body.dataInstance },
      'save',
      task,
      env,
    )
    const committed = await commitChange(this.deps, loaded, actor, {
      state,
      effects: [],
      event: 'Updated',
      activities: [{ type: 'save', taskId: task.taskId, stepId: task.stepId }],
    })
    return this.sessionOn(actor, committed, compiled, task.taskId, loaded.lockHolder)
  }

  async runFunction(actor: Actor, body: FunctionActionRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    const { fail } = this.deps
    // Missing ids answer 500 (docs/reference/http.md#unusual-statuses).
    if (!body.processInstanceId) throw fail('wm3060', { args: ['processInstanceId'], parameters: { field: 'body.processInstanceId' } })
    if (!body.taskId) throw fail('wm3060', { args: ['taskId'], parameters: { field: 'body.taskId' } })
    const loaded = await this.actionableTask(actor, body.processInstanceId, body.taskId, additionalHeaders)
    const { stored, task, compiled, env } = loaded
    const result = await runtimeCall(fail, 'actionFunction', () =>
      compiled.runActionFunction(
        stateOf(stored),
        { taskId: task.taskId, dataInstance: body.dataInstance, ...(body.customType ? { customType: body.customType } : {}) },
        env,
      ),
    )
    const committed = await commitChange(this.deps, loaded, actor, {
      state: result.state,
      effects: result.effects,
      event: 'Updated',
      activities: [
        { type: 'function', taskId: task.taskId, stepId: task.stepId, details: body.customType ? { customType: body.customType } : {} },
      ],
    })
    return this.sessionOn(actor, committed, compiled, task.taskId, loaded.lockHolder, result.infoList, {
      actionType: 'function',
      taskId: task.taskId,
      ...(body.customType ? { customType: body.customType } : {}),
    })
  }

  async retry(actor: Actor, body: RetryActionRequest, additionalHeaders: AdditionalHeaders): Promise<Session> {
    const stored = await this.deps.instances.loadFor(actor, body.processInstanceId)
    const { committed, compiled, transition } = await retryFailedThread(this.deps, actor, stored, body.threadId, additionalHeaders)
    const task = taskForForm(committed.processInstance, actor, createdTasks(transition.effects))
    return this.deps.sessions.build({ principal: actor, state: committed, compiled, task, skipToForm: true, infoList: transition.infoList })
  }

  /**
   * Loads the instance for an authorized user and checks the task can be acted on now: it exists
   * (404 wm3005), is open (409 wm3041), the user may work on it (403 wm4030) and nobody else holds
   * its lock (409 wm3040).
   */
  private async actionableTask(
    actor: Actor,
    processInstanceId: string,
    taskId: string,
    additionalHeaders: AdditionalHeaders,
  ): Promise<ActionableTask> {
    const { instances, models, environments, authorization, locks, fail } = this.deps
    const stored = await instances.loadFor(actor, processInstanceId)
    const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === taskId)
    if (!task) throw fail('wm3005', { args: [taskId], parameters: { taskId, processInstanceId } })
    if (task.status !== 'open') throw fail('wm3041', { args: [taskId], parameters: { taskId, processInstanceId } })
    authorization.assertMayActOnTask(actor, stored.processInstance, task)
    const lock = await locks.holder(taskId)
    if (lock && lock.userId !== actor.userId)
      throw fail('wm3040', { args: [taskId, lock.userId], parameters: { taskId, lockedBy: lock.userId } })
    const compiled = await models.ofInstance(stored.processInstance)
    const env = await environments.create({
      actor: runtimeUserOf(actor),
      appId: stored.appId,
      organizationId: stored.organizationId,
      additionalHeaders,
    })
    return { stored, task, compiled, env, lockHolder: lock ? lock.userId : null }
  }

  /** The session on the task just acted on (it stays open). */
  private sessionOn(
    actor: Actor,
    committed: StoredContext,
    compiled: CompiledProcess,
    taskId: string,
    lockHolder: string | null,
    infoList?: string[],
    action?: { actionType: 'function'; taskId: string; customType?: string },
  ): Promise<Session> {
    const task = committed.processInstance.tasks.find((candidate) => candidate.taskId === taskId)
    return this.deps.sessions.build({
      principal: actor,
      state: committed,
      compiled,
      task,
      skipToForm: true,
      lockHolder,
      ...(infoList ? { infoList } : {}),
      ...(action ? { action } : {}),
    })
  }
}
