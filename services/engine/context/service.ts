/**
 * `POST /context`: opens a workflow. Without an instance it starts one (the first task locked for
 * the initiator); with one it loads it for an authorized user, picks the task whose form opens,
 * takes that task's lock when the form is opened directly (`skipToForm`), and logs a `display`.
 */
import type { ContextRequest, Session } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { Clock } from '../../../plugins/clock/plugin.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { ActivityRepository } from '../instances/activities.js'
import { mayActOnTask } from '../instances/authorization.js'
import type { ProcessInstances } from '../instances/service.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import type { ProcessModels } from '../models/service.js'
import type { ProcessStarter } from '../lifecycle/start.js'
import type { ActionType, Task } from '../../../runtime/types.js'
import type { ContextAction, SessionBuilder } from '../tasks/session.js'
import { taskForForm } from '../tasks/form-task.js'

type AdditionalHeaders = string | string[] | undefined

/** `skipToForm` comes as a boolean or as its text. */
export function skipsToForm(value: boolean | string | undefined): boolean {
  return value === true || value === 'true'
}

function actionOf(body: ContextRequest): ContextAction | undefined {
  if (!body.actionType) return undefined
  return {
    actionType: body.actionType as ActionType,
    ...(body.customType ? { customType: body.customType } : {}),
    ...(body.taskId ? { taskId: body.taskId } : {}),
  }
}

export interface ContextServiceDependencies {
  models: ProcessModels
  starter: ProcessStarter
  instances: ProcessInstances
  activities: ActivityRepository
  locks: TaskLockRepository
  sessions: SessionBuilder
  fail: ErrorFactory<EngineErrorCode>
  now: Clock
}

export class ContextService {
  constructor(private readonly deps: ContextServiceDependencies) {}

  /** `newInstanceId`: the id a start gives its instance (an idempotent start's claim); a new one when absent. */
  async open(actor: Actor, body: ContextRequest, additionalHeaders: AdditionalHeaders, newInstanceId?: string): Promise<Session> {
    if (body.processInstanceId) return this.openInstance(actor, body, body.processInstanceId)
    return this.startInstance(actor, body, additionalHeaders, newInstanceId)
  }

  private async startInstance(
    actor: Actor,
    body: ContextRequest,
    additionalHeaders: AdditionalHeaders,
    newInstanceId: string | undefined,
  ): Promise<Session> {
    const { models, starter, sessions } = this.deps
    const appId = body.appId ?? (await models.resolveAppId(actor.organizationId, body.processId))
    const started = await starter.start({
      actor,
      appId,
      processId: body.processId,
      input: body.input ?? {},
      organizationId: body.organizationId,
      businessKey: body.businessKey,
      additionalHeaders,
      lockFirstTask: true,
      ...(newInstanceId === undefined ? {} : { processInstanceId: newInstanceId }),
    })
    const { stored, compiled, firstTask } = started
    return sessions.build({
      principal: actor,
      state: stored,
      compiled,
      task: firstTask,
      skipToForm: skipsToForm(body.skipToForm),
      ...(started.lockHolder !== undefined ? { lockHolder: started.lockHolder } : {}),
      ...(actionOf(body) ? { action: actionOf(body) as ContextAction } : {}),
    })
  }

  private async openInstance(actor: Actor, body: ContextRequest, processInstanceId: string): Promise<Session> {
    const { instances, models, activities, locks, sessions, fail } = this.deps
    const stored = await instances.loadFor(actor, processInstanceId)
    const instance = stored.processInstance
    const compiled = await models.ofInstance(instance)
    let task: Task | undefined
    if (body.taskId) {
      task = instance.tasks.find((candidate) => candidate.taskId === body.taskId)
      if (!task) throw fail('wm3005', { args: [body.taskId], parameters: { taskId: body.taskId, processInstanceId } })
    } else {
      task = taskForForm(instance, actor)
    }
    const skipToForm = skipsToForm(body.skipToForm)
    const locking =
      skipToForm && task?.status === 'open' && mayActOnTask(actor, task)
        ? locks.acquire(task.taskId, processInstanceId, actor.userId)
        : undefined
    const [outcome] = await Promise.all([
      locking,
      activities.record({
        processInstanceId,
        timeStamp: this.deps.now().toISOString(),
        type: 'display',
        userId: actor.userId,
        userName: actor.fullName,
        ...(task ? { taskId: task.taskId, stepId: task.stepId } : {}),
        details: { skipToForm },
      }),
    ])
    const lockHolder = outcome === undefined ? undefined : outcome.acquired ? outcome.lock.userId : outcome.holder.userId
    return sessions.build({
      principal: actor,
      state: stored,
      compiled,
      task,
      skipToForm,
      ...(lockHolder !== undefined ? { lockHolder } : {}),
      ...(actionOf(body) ? { action: actionOf(body) as ContextAction } : {}),
    })
  }
}
