/**
 * Changing an instance's step headlessly (`/external/process/changeStep`): its open tasks are
 * cancelled (their locks released), then it runs on from the named step. One compare-and-set commit,
 * so a failure anywhere before the write leaves the instance as it was.
 */
import type { ChangeStepRequest } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import { type ErrorFactory, isServiceError } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { type Authorization, sameTenant } from '../instances/authorization.js'
import type { ContextRepository } from '../instances/repository.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import { commitChange } from '../instances/loaded-instance-operations.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import type { RuntimeEffect, Task } from '../../../runtime/types.js'
import {
  type AdditionalHeaders,
  type InstanceDependencies,
  type LoadedInstance,
  loadInstance,
  stateOf,
} from '../instances/loaded-instance.js'
import { engineServicePlugin } from '../instances/dependencies.js'

export interface StepChangeDependencies extends InstanceDependencies {
  contexts: ContextRepository
  locks: TaskLockRepository
  authorization: Authorization
}

function cancelledTasks(effects: readonly RuntimeEffect[]): Task[] {
  return effects.flatMap((effect) => (effect.kind === 'taskCancelled' ? [effect.task] : []))
}

export class StepChanges {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(private readonly deps: StepChangeDependencies) {
    this.fail = deps.fail
  }

  /** Forces an instance to a step: open tasks cancelled (their locks released), then it runs on from there. */
  async changeStep(actor: Actor, body: ChangeStepRequest, additionalHeaders: AdditionalHeaders): Promise<{ isSuccess: boolean }> {
    this.deps.authorization.assertMayActForOthers(actor, 'changeStep')
    const processInstanceId = body.processInstanceId ?? (await this.idByBusinessKey(actor, body))
    let loaded: LoadedInstance
    try {
      loaded = await loadInstance(this.deps, actor, {
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
    const { stored, compiled, env } = loaded
    if (!compiled.step(body.stepId))
      throw this.fail('wm3130', { args: [body.stepId], parameters: { field: 'body.stepId', stepId: body.stepId } })
    const request = { ...(body.dataInstance ? { dataInstance: body.dataInstance } : {}), ...(body.status ? { status: body.status } : {}) }
    const transition = await runtimeCall(this.fail, 'advance', () => compiled.changeStep(stateOf(stored), body.stepId, request, env))
    await commitChange(this.deps, loaded, actor, {
      state: transition.state,
      effects: transition.effects,
      event: 'Updated',
      activities: [{ type: 'changeStep', stepId: body.stepId, details: { status: transition.state.processInstance.processStatus } }],
      // The cancelled tasks' locks mean nothing any more: they go with the change.
      writes: cancelledTasks(transition.effects).map((task) => this.deps.locks.taskRelease(task.taskId)),
    })
    return { isSuccess: true }
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
    const stored = await this.deps.contexts.findByBusinessKey(actor, body.processId, body.businessKey)
    if (!stored || !sameTenant(actor, stored)) throw this.moveTargetNotFound(reference)
    return stored._id
  }

  private moveTargetNotFound(reference: string) {
    return this.fail('wm3131', { args: [reference], parameters: { field: 'body.processInstanceId' } })
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    stepChanges: StepChanges
  }
}

export default engineServicePlugin('step-changes', 'stepChanges', (dependencies) => new StepChanges(dependencies))
