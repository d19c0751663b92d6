/**
 * Task functions and commits (docs/reference/tasks.md#task-functions). A task function is one of the step's
 * `taskFunctions` or a function of the app's `functions` models; it runs on the stored data (or the
 * `dataInstance` the request gives, which replaces it first) and its changes to `data` are stored.
 * A commit only replaces the data: an `Updated` notification, no activity, no function, no lock.
 */
import type { TaskCommitRequest, TaskFunctionResult, TaskRunRequest } from '../../../openapi/generated/schemas.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { Authorization } from '../instances/authorization.js'
import type { ProcessModels } from '../models/service.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import { type AdditionalHeaders, loadInstance, type InstanceDependencies, openTaskOf } from '../instances/loaded-instance.js'
import { withFields } from '../../../lib/with-fields.js'

export interface TaskServiceDependencies extends InstanceDependencies {
  authorization: Authorization
  models: ProcessModels
}

export class TaskService {
  constructor(private readonly deps: TaskServiceDependencies) {}

  async runFunction(
    actor: Actor,
    taskId: string,
    functionId: string,
    body: TaskRunRequest,
    additionalHeaders: AdditionalHeaders,
  ): Promise<TaskFunctionResult> {
    const { instances, authorization, fail } = this.deps
    const { stored, compiled, env } = await loadInstance(
      this.deps,
      actor,
      withFields(body, { additionalHeaders, check: 'access' as const }),
    )
    const task = openTaskOf(fail, stored, taskId)
    authorization.assertMayActOnTask(actor, stored.processInstance, task)
    const step = compiled.step(task.stepId)
    const ownTaskFunction = step?.type === 'userTask' && (step.taskFunctions ?? []).includes(functionId)
    if (!ownTaskFunction && !env.host.appFunction(functionId)) {
      throw fail('wm3054', {
        args: [`${functionId} is neither a task function of step ${task.stepId} nor a function of the app`],
        parameters: { functionId, taskId },
      })
    }
    const state = { processInstance: stored.processInstance, dataInstance: body.dataInstance ?? stored.dataInstance }
    const result = await runtimeCall(fail, 'function', () =>
      compiled.runFunction(functionId, { state, input: body.inputParams ?? {}, taskId }, env),
    )
    const committed = await instances.commit({
      previous: stored,
      state: { processInstance: stored.processInstance, dataInstance: result.dataInstance },
      effects: [],
      compiled,
      env,
      actor,
      event: 'Updated',
      activities: [{ type: 'taskFunction', taskId, stepId: task.stepId, details: { functionId } }],
    })
    return {
      dataInstance: committed.dataInstance,
      output: result.output,
      ...(result.infoList.length > 0 ? { infoList: result.infoList } : {}),
    }
  }

  async commit(actor: Actor, taskId: string, body: TaskCommitRequest, additionalHeaders: AdditionalHeaders): Promise<{ success: boolean }> {
    const { instances, authorization, fail } = this.deps
    const { stored, compiled, env } = await loadInstance(
      this.deps,
      actor,
      withFields(body, { additionalHeaders, check: 'access' as const }),
    )
    const task = openTaskOf(fail, stored, taskId)
    authorization.assertMayActOnTask(actor, stored.processInstance, task)
    await instances.commit({
      previous: stored,
      state: { processInstance: stored.processInstance, dataInstance: body.dataInstance },
      effects: [],
      compiled,
      env,
      actor,
      event: 'Updated',
      activities: [],
    })
    return { success: true }
  }
}
