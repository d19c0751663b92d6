/**
 * Running a model's or an app's function outside a task's form (`/external/function/:functionId/execute`,
 * and the functions schedules run): in a process context its `data` changes and `output` are merged
 * into the stored dataInstance in one compare-and-set commit; standalone, an app function of the
 * caller's tenant runs with no instance, and its data writes are stored once it succeeded.
 */
import type { ExternalFunctionRequest, FunctionResult } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { CacheRegistry } from '../../../plugins/cache/registry.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { runtimeUserOf, SYSTEM_USER } from '../flow-host/environment.js'
import { storingDataWrites } from '../flow-host/data-conflicts.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import { commitChange, runModelFunction } from '../instances/loaded-instance-operations.js'
import { runStandaloneFunction } from '../../../runtime/compile.js'
import type { CompiledFunction, FunctionCache } from '../../../runtime/flow/compile.js'
import { type AdditionalHeaders, loadInstance, type InstanceDependencies } from '../instances/loaded-instance.js'
import { engineServicePlugin } from '../instances/dependencies.js'

export interface FunctionRunDependencies extends InstanceDependencies {
  caches: CacheRegistry
}

export class FunctionRuns {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(private readonly deps: FunctionRunDependencies) {
    this.fail = deps.fail
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
    await storingDataWrites(this.fail, env.unitOfWork, () => env.unitOfWork.applyAlone())
    return { output: result.output, ...(result.infoList.length > 0 ? { infoList: result.infoList } : {}) }
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
    const loaded = await loadInstance(this.deps, actor, { ...body, additionalHeaders, check: 'access' })
    const { stored } = loaded
    const taskId = body.taskId as string
    const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === taskId)
    if (!task) throw this.fail('wm3005', { args: [taskId], parameters: { taskId, processInstanceId: stored._id } })
    const result = await runModelFunction(this.fail, loaded, functionId, body.inputParams ?? {}, taskId)
    const committed = await commitChange(this.deps, loaded, actor, {
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
}

declare module 'fastify' {
  interface FastifyInstance {
    functionRuns: FunctionRuns
  }
}

/** One service for the route and for scheduled function runs. */
export default engineServicePlugin('function-runs', 'functionRuns', (dependencies) => new FunctionRuns(dependencies))
