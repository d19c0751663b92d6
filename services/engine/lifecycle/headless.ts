/**
 * The headless APIs (docs/reference/tasks.md#headless-actions-and-assignment): they neither take nor check task locks
 * nor prepare form contexts. Each computes the new state from the stored one and commits it with a
 * compare-and-set, so a failure anywhere before the write leaves the instance as it was.
 */
import type {
  AssignToSwimlaneRequest,
  AssignToUserRequest,
  ChangeStepRequest,
  ExternalFunctionRequest,
  ExternalTaskActionRequest,
  FunctionResult,
} from '../../../openapi/generated/schemas.js'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import { type ErrorFactory, isServiceError } from '../../../plugins/errors/service-error.js'
import type { CacheRegistry } from '../../../plugins/cache/registry.js'
import { type Actor, findActor } from '../../../plugins/identity/plugin.js'
import type { Store } from '../../../store/port.js'
import { endTask } from '../tasks/actions.js'
import { type Authorization, sameTenant } from '../instances/authorization.js'
import type { ContextRepository } from '../instances/repository.js'
import type { ActivityEntry } from '../instances/service.js'
import { runtimeUserOf, SYSTEM_USER } from '../flow-host/environment.js'
import { runtimeCall, runtimeFailure } from '../instances/runtime-errors.js'
import { commitAtHand, runFunctionAtHand } from '../instances/at-hand-operations.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import { runStandaloneFunction } from '../../../runtime/compile.js'
import type { CompiledFunction, FunctionCache } from '../../../runtime/flow/compile.js'
import type { ProcessInstance, RuntimeEffect, Task } from '../../../runtime/types.js'
import {
  type AdditionalHeaders,
  type InstanceAtHand,
  instanceAtHand,
  type InstanceDependencies,
  openTaskOf,
  stateOf,
} from '../instances/instance-at-hand.js'
import { engineDependencies } from '../instances/dependencies.js'

export const EXTERNAL_ACTION_TYPES = ['complete', 'cancel', 'return'] as const
export type ExternalActionType = (typeof EXTERNAL_ACTION_TYPES)[number]

export interface ExternalServiceDependencies extends InstanceDependencies {
  contexts: ContextRepository
  locks: TaskLockRepository
  caches: CacheRegistry
  store: Store
  authorization: Authorization
}

function isExternalActionType(value: string): value is ExternalActionType {
  return (EXTERNAL_ACTION_TYPES as readonly string[]).includes(value)
}

function cancelledTasks(effects: readonly RuntimeEffect[]): Task[] {
  return effects.flatMap((effect) => (effect.kind === 'taskCancelled' ? [effect.task] : []))
}

/** The instance with one of its tasks replaced. */
function withTask(instance: ProcessInstance, task: Task): ProcessInstance {
  return { ...instance, tasks: instance.tasks.map((candidate) => (candidate.taskId === task.taskId ? task : candidate)) }
}

/** The instance with the task as it is now assigned, and what the `Assigned` activity says of it. */
type Reassignment = (
  atHand: InstanceAtHand,
  task: Task,
) => Promise<{ instance: ProcessInstance; activity: Required<Pick<ActivityEntry, 'type' | 'details'>> }>

export class ExternalService {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(private readonly deps: ExternalServiceDependencies) {
    this.fail = deps.fail
  }

  /** complete / cancel / return a task headlessly; a failure to advance stores nothing (500 wm3050). */
  async act(
    actor: Actor,
    taskId: string,
    actionType: string,
    body: ExternalTaskActionRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<{ isSuccess: boolean }> {
    if (!isExternalActionType(actionType)) {
      throw this.fail('wm3110', {
        args: [`${actionType} (expected ${EXTERNAL_ACTION_TYPES.join(', ')})`],
        parameters: { field: 'params.actionType' },
      })
    }
    const atHand = await instanceAtHand(this.deps, actor, { ...body, additionalHeaders, check: 'tenant' })
    const task = openTaskOf(this.fail, atHand.stored, taskId)
    this.deps.authorization.assertMayEndTask(actor, atHand.stored.processInstance, task)
    await endTask(this.deps, { ...atHand, task }, { actor, actionType, request: body, details: { headless: true } })
    return { isSuccess: true }
  }

  /** Assigns a task to a user resolved by the model's `getUser`, else from the tenant's users (404 wm3120). */
  async assignToUser(
    actor: Actor,
    taskId: string,
    body: AssignToUserRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<{ isSuccess: boolean }> {
    return this.reassign(actor, 'assignToUser', taskId, body, additionalHeaders, async (atHand, task) => {
      const target = await this.targetUser(atHand, task, body.targetUserId)
      const instance = withTask(atHand.stored.processInstance, { ...task, userId: target.userId, userName: target.userName })
      const contributorUsers = instance.contributorUsers.includes(target.userId)
        ? instance.contributorUsers
        : [...instance.contributorUsers, target.userId]
      return {
        instance: { ...instance, contributorUsers },
        activity: { type: 'assign', details: { targetUserId: target.userId, targetUserName: target.userName } },
      }
    })
  }

  /** Puts a task into a swimlane's pool (a swimlane of the model, else 400 wm3121): no assignee any more. */
  async assignToSwimlane(
    actor: Actor,
    taskId: string,
    body: AssignToSwimlaneRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<{ isSuccess: boolean }> {
    return this.reassign(actor, 'assignToSwimlane', taskId, body, additionalHeaders, async ({ stored, compiled }, task) => {
      if (!Object.hasOwn(compiled.swimlanes, body.swimlane)) {
        throw this.fail('wm3121', { args: [body.swimlane], parameters: { field: 'body.swimlane', swimlane: body.swimlane } })
      }
      const { userId: _userId, userName: _userName, ...unassigned } = task
      return {
        instance: withTask(stored.processInstance, { ...unassigned, swimlane: body.swimlane }),
        activity: { type: 'assignToSwimlane', details: { swimlane: body.swimlane } },
      }
    })
  }

  /**
   * Runs a function in a process context (its `data` changes and `output` merged into the stored
   * dataInstance) or standalone (an app function of the user's tenant, no context, no instance
   * authorization). The actor is null only for a scheduled run, which names its tenant.
   */
  async executeFunction(
    actor: Actor | null,
    functionId: string,
    body: ExternalFunctionRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<FunctionResult> {
    if (body.processInstanceId !== undefined)
      return this.executeInProcess(actor, functionId, { ...body, processInstanceId: body.processInstanceId }, additionalHeaders)
    if (body.appId === undefined) {
      throw this.fail('wm4000', {
        args: ['body needs processInstanceId (process-context mode) or appId (standalone mode)'],
        parameters: { field: 'body.appId' },
      })
    }
    const appId = body.appId
    // Another tenant's functions are invisible to a user, as unknown ones are.
    if (actor && actor.appId !== appId) throw this.fail('wm3054', { args: [`${functionId} in app ${appId}`], parameters: { functionId } })
    const env = await this.deps.environments.create({
      actor: actor ? runtimeUserOf(actor) : SYSTEM_USER,
      appId,
      organizationId: actor ? actor.organizationId : (body.organizationId ?? ''),
      additionalHeaders,
    })
    const definition = env.host.appFunction(functionId)
    if (!definition) throw this.fail('wm3054', { args: [`${functionId} in app ${appId}`], parameters: { functionId } })
    const functionCache: FunctionCache = this.deps.caches.cache<CompiledFunction>('service')
    const result = await runtimeCall(this.fail, 'function', () =>
      runStandaloneFunction(functionId, definition, body.inputParams ?? {}, env, { functionCache }),
    )
    // No instance to store them with: the run's data writes are stored now, all together, once it succeeded.
    await env.unitOfWork.applyAlone()
    return { output: result.output, ...(result.infoList.length > 0 ? { infoList: result.infoList } : {}) }
  }

  /** Forces an instance to a step: open tasks cancelled (their locks released), then it runs on from there. */
  async changeStep(actor: Actor, body: ChangeStepRequest, additionalHeaders: AdditionalHeaders): Promise<{ isSuccess: boolean }> {
    this.deps.authorization.assertMayActForOthers(actor, 'changeStep')
    const processInstanceId = body.processInstanceId ?? (await this.idByBusinessKey(actor, body))
    let atHand: InstanceAtHand
    try {
      atHand = await instanceAtHand(this.deps, actor, {
        processInstanceId,
        appId: body.appId,
        processId: body.processId,
        businessKey: body.businessKey,
        additionalHeaders,
        check: 'tenant',
      })
    } catch (error) {
      // An instance that cannot be found answers 400 (docs/reference/http.md#unusual-statuses).
      if (isServiceError(error) && error.code === 'wm3001') throw this.moveTargetNotFound(processInstanceId)
      throw error
    }
    const { stored, compiled, env } = atHand
    if (!compiled.step(body.stepId))
      throw this.fail('wm3130', { args: [body.stepId], parameters: { field: 'body.stepId', stepId: body.stepId } })
    const request = { ...(body.dataInstance ? { dataInstance: body.dataInstance } : {}), ...(body.status ? { status: body.status } : {}) }
    const transition = await runtimeCall(this.fail, 'advance', () => compiled.changeStep(stateOf(stored), body.stepId, request, env))
    await commitAtHand(this.deps, atHand, actor, {
      state: transition.state,
      effects: transition.effects,
      event: 'Updated',
      activities: [{ type: 'changeStep', stepId: body.stepId, details: { status: transition.state.processInstance.processStatus } }],
    })
    for (const task of cancelledTasks(transition.effects)) await this.deps.locks.releaseTask(task.taskId)
    return { isSuccess: true }
  }

  /**
   * Releases every lock the user holds: the caller's own, or, for an admin or a system user, those
   * of another user of the same tenant (a user of another tenant, or a request naming another app,
   * is not found, 404 wm3120).
   */
  async releaseLocksOf(actor: Actor, userId: string, appId: string | undefined): Promise<{ status: 'OK' }> {
    if (appId !== undefined && appId !== actor.appId)
      throw this.fail('wm3120', { args: [userId], parameters: { field: 'params.userId', targetUserId: userId } })
    if (userId !== actor.userId) {
      this.deps.authorization.assertMayActForOthers(actor, `release the locks of ${userId}`)
      const owner = await findActor(this.deps.store, userId)
      if (!owner || !sameTenant(actor, owner))
        throw this.fail('wm3120', { args: [userId], parameters: { field: 'params.userId', targetUserId: userId } })
    }
    await this.deps.locks.releaseAllOf(userId)
    return { status: 'OK' }
  }

  /**
   * The client closed the form: the user's lock of the task is released. Another user's lock is for
   * an admin or a system user; a task of another tenant, or a request naming another app, is not
   * found (404 wm3005).
   */
  async closeApp(actor: Actor, taskId: string, userId: string, appId: string | undefined): Promise<{ status: 'OK' }> {
    if (userId !== actor.userId) this.deps.authorization.assertMayActForOthers(actor, `release the lock of ${userId}`)
    if (appId !== undefined && appId !== actor.appId) throw this.fail('wm3005', { args: [taskId], parameters: { taskId } })
    const lock = await this.deps.locks.holder(taskId)
    if (!lock) return { status: 'OK' }
    const stored = await this.deps.contexts.find(lock.processInstanceId)
    if (stored && !sameTenant(actor, stored)) throw this.fail('wm3005', { args: [taskId], parameters: { taskId } })
    if (lock.userId !== userId) return { status: 'OK' }
    await this.deps.locks.release(taskId, userId)
    return { status: 'OK' }
  }

  private async executeInProcess(
    actor: Actor | null,
    functionId: string,
    body: ExternalFunctionRequest & { processInstanceId: string },
    additionalHeaders: AdditionalHeaders,
  ): Promise<FunctionResult> {
    for (const field of ['processId', 'taskId', 'businessKey'] as const) {
      if (body[field] === undefined)
        throw this.fail('wm4000', { args: [`body.${field} is required in process-context mode`], parameters: { field: `body.${field}` } })
    }
    if (!actor)
      throw this.fail('wm4010', { args: ['the user header is required in process-context mode'], parameters: { field: 'headers.user' } })
    const atHand = await instanceAtHand(this.deps, actor, { ...body, additionalHeaders, check: 'access' })
    const { stored } = atHand
    const taskId = body.taskId as string
    const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === taskId)
    if (!task) throw this.fail('wm3005', { args: [taskId], parameters: { taskId, processInstanceId: stored._id } })
    const result = await runFunctionAtHand(this.fail, atHand, functionId, body.inputParams ?? {}, taskId)
    const committed = await commitAtHand(this.deps, atHand, actor, {
      state: { processInstance: stored.processInstance, dataInstance: { ...result.dataInstance, ...result.output } },
      effects: [],
      event: 'Updated',
      activities: [{ type: 'function', taskId, stepId: task.stepId, details: { functionId, headless: true } }],
    })
    return {
      dataInstance: committed.dataInstance,
      output: result.output,
      ...(result.infoList.length > 0 ? { infoList: result.infoList } : {}),
    }
  }

  /** Reassigns an open task (an admin's or a system user's operation) in one `Assigned` commit. */
  private async reassign(
    actor: Actor,
    operation: 'assignToUser' | 'assignToSwimlane',
    taskId: string,
    body: { processInstance: string; appId?: string | undefined },
    additionalHeaders: AdditionalHeaders,
    assign: Reassignment,
  ): Promise<{ isSuccess: boolean }> {
    this.deps.authorization.assertMayActForOthers(actor, operation)
    const atHand = await instanceAtHand(this.deps, actor, {
      processInstanceId: body.processInstance,
      appId: body.appId,
      additionalHeaders,
      check: 'tenant',
    })
    const task = openTaskOf(this.fail, atHand.stored, taskId)
    const { instance, activity } = await assign(atHand, task)
    await commitAtHand(this.deps, atHand, actor, {
      state: { processInstance: instance, dataInstance: atHand.stored.dataInstance },
      effects: [],
      event: 'Assigned',
      activities: [{ type: activity.type, taskId, stepId: task.stepId, details: activity.details }],
    })
    return { isSuccess: true }
  }

  /** The user a task is assigned to: the `getUser` named function's answer, else the tenant's user. */
  private async targetUser(
    { stored, compiled, env }: InstanceAtHand,
    task: Task,
    targetUserId: string,
  ): Promise<{ userId: string; userName: string }> {
    const notFound = () => this.fail('wm3120', { args: [targetUserId], parameters: { targetUserId } })
    const getUser = compiled.namedFunction('getUser')
    if (!getUser) {
      const user = await env.host.findUser(targetUserId)
      if (!user) throw notFound()
      return { userId: user.userId, userName: user.fullName }
    }
    let output: Record<string, unknown>
    try {
      output = (await compiled.runFunction(getUser, { state: stateOf(stored), input: { targetUserId }, taskId: task.taskId }, env)).output
    } catch (error) {
      const failure = runtimeFailure(this.fail, error, 'function')
      // A `fail` node in getUser is its way of saying there is no such user.
      throw failure.code === 'wm3053' ? notFound() : failure
    }
    if (typeof output.userId !== 'string' || output.userId === '') throw notFound()
    return { userId: output.userId, userName: typeof output.userName === 'string' ? output.userName : output.userId }
  }

  /** The instance named by processId + businessKey in the user's app (400 when neither form is given). */
  private async idByBusinessKey(actor: Actor, body: ChangeStepRequest): Promise<string> {
    if (body.processId === undefined || body.businessKey === undefined) {
      throw this.fail('wm4000', {
        args: ['body needs processInstanceId, or processId and businessKey'],
        parameters: { field: 'body.processInstanceId' },
      })
    }
    const reference = `${body.processId} ${body.businessKey}`
    if (body.appId !== undefined && body.appId !== actor.appId) throw this.moveTargetNotFound(reference)
    const stored = await this.deps.contexts.findByBusinessKey(actor.appId, body.processId, body.businessKey)
    if (!stored || !sameTenant(actor, stored)) throw this.moveTargetNotFound(reference)
    return stored._id
  }

  private moveTargetNotFound(reference: string) {
    return this.fail('wm3131', { args: [reference], parameters: { field: 'body.processInstanceId' } })
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    externalService: ExternalService
  }
}

async function externalServicePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('externalService', new ExternalService(engineDependencies(fastify)))
}

/** One headless service for the routes and for scheduled function runs. */
export default fp(externalServicePlugin, {
  name: 'external-service',
  dependencies: [
    'process-models',
    'process-instances',
    'run-environments',
    'contexts-repository',
    'task-locks-repository',
    'caches',
    'store',
    'authorization',
    'errors',
  ],
})
