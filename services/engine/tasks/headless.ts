/**
 * The headless task operations, for integrations rather than forms: ending a task
 * (`/external/task/:taskId/action/:actionType`), assigning it to a user or a swimlane's pool, and
 * releasing locks (`DELETE /external/locks/:userId`, `POST /appclose`). They neither take nor check
 * task locks nor prepare form contexts; each computes the new state from the stored one and commits
 * it with a compare-and-set, so a failure anywhere before the write leaves the instance as it was.
 */
import type { AssignToSwimlaneRequest, AssignToUserRequest, ExternalTaskActionRequest } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { type Actor, findActor } from '../../../plugins/identity/actor.js'
import type { Store } from '../../../store/port.js'
import { endTask } from './actions.js'
import { type Authorization, sameTenant } from '../instances/authorization.js'
import type { ContextRepository } from '../instances/repository.js'
import type { ActivityEntry } from '../instances/service.js'
import { runtimeFailure } from '../instances/runtime-errors.js'
import { commitChange } from '../instances/loaded-instance-operations.js'
import type { TaskLockRepository } from './locks.js'
import type { ProcessInstance, Task } from '../../../runtime/types.js'
import {
  type AdditionalHeaders,
  type LoadedInstance,
  loadInstance,
  type InstanceDependencies,
  openTaskOf,
  stateOf,
} from '../instances/loaded-instance.js'
import { engineServicePlugin } from '../instances/dependencies.js'

export const EXTERNAL_ACTION_TYPES = ['complete', 'cancel', 'return'] as const
export type ExternalActionType = (typeof EXTERNAL_ACTION_TYPES)[number]

export interface HeadlessTaskDependencies extends InstanceDependencies {
  contexts: ContextRepository
  locks: TaskLockRepository
  store: Store
  authorization: Authorization
}

function isExternalActionType(value: string): value is ExternalActionType {
  return (EXTERNAL_ACTION_TYPES as readonly string[]).includes(value)
}

/** The instance with one of its tasks replaced. */
function withTask(instance: ProcessInstance, task: Task): ProcessInstance {
  return { ...instance, tasks: instance.tasks.map((candidate) => (candidate.taskId === task.taskId ? task : candidate)) }
}

/** The instance with the task as it is now assigned, and what the `Assigned` activity says of it. */
type Reassignment = (
  loaded: LoadedInstance,
  task: Task,
) => Promise<{ instance: ProcessInstance; activity: Required<Pick<ActivityEntry, 'type' | 'details'>> }>

export class HeadlessTasks {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(private readonly deps: HeadlessTaskDependencies) {
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
    const loaded = await loadInstance(this.deps, actor, { ...body, additionalHeaders, check: 'tenant' })
    const task = openTaskOf(this.fail, loaded.stored, taskId)
    this.deps.authorization.assertMayEndTask(actor, loaded.stored.processInstance, task)
    await endTask(this.deps, { ...loaded, task }, { actor, actionType, request: body, details: { headless: true } })
    return { isSuccess: true }
  }

  /** Assigns a task to a user resolved by the model's `getUser`, else from the tenant's users (404 wm3120). */
  async assignToUser(
    actor: Actor,
    taskId: string,
    body: AssignToUserRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<{ isSuccess: boolean }> {
    return this.reassign(actor, 'assignToUser', taskId, body, additionalHeaders, async (loaded, task) => {
      const target = await this.targetUser(loaded, task, body.targetUserId)
      const instance = withTask(loaded.stored.processInstance, { ...task, userId: target.userId, userName: target.userName })
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
    const loaded = await loadInstance(this.deps, actor, {
      processInstanceId: body.processInstance,
      appId: body.appId,
      additionalHeaders,
      check: 'tenant',
    })
    const task = openTaskOf(this.fail, loaded.stored, taskId)
    const { instance, activity } = await assign(loaded, task)
    await commitChange(this.deps, loaded, actor, {
      state: { processInstance: instance, dataInstance: loaded.stored.dataInstance },
      effects: [],
      event: 'Assigned',
      activities: [{ type: activity.type, taskId, stepId: task.stepId, details: activity.details }],
    })
    return { isSuccess: true }
  }

  /** The user a task is assigned to: the `getUser` named function's answer, else the tenant's user. */
  private async targetUser(
    { stored, compiled, env }: LoadedInstance,
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
}

declare module 'fastify' {
  interface FastifyInstance {
    headlessTasks: HeadlessTasks
  }
}

export default engineServicePlugin('headless-tasks', 'headlessTasks', (dependencies) => new HeadlessTasks(dependencies))
