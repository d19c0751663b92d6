/**
 * Loading a process instance for a change outside the action endpoints (notes, task functions,
 * commits, headless calls, files): the stored instance, checked against the caller's tenant (and,
 * for a user, authorization), its compiled model version and a run environment for the request.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { StoredContext } from '../../../store/collections.js'
import { sameTenant } from './authorization.js'
import type { ProcessInstances } from './service.js'
import { type RequestEnvironment, runtimeUserOf, type RunEnvironments, SYSTEM_USER } from '../flow-host/environment.js'
import type { ProcessModels } from '../models/service.js'
import type { CompiledProcess, ProcessState, Task } from '../../../runtime/types.js'

export type AdditionalHeaders = string | string[] | undefined

export interface InstanceDependencies {
  instances: ProcessInstances
  models: ProcessModels
  environments: RunEnvironments
  fail: ErrorFactory<EngineErrorCode>
}

export interface LoadedInstance {
  stored: StoredContext
  compiled: CompiledProcess
  env: RequestEnvironment
}

export interface InstanceLookup {
  processInstanceId: string
  /** The request's (auto-injected) app: another app's instance is not found. */
  appId?: string | undefined
  /** The process the caller names: an instance of another process is not found. */
  processId?: string | undefined
  /** The business key the caller names: another instance's is not found. */
  businessKey?: string | undefined
  additionalHeaders?: AdditionalHeaders
  /**
   * `access`: the user must be authorized on the instance (403 otherwise); `tenant`: headless
   * calls, where a user, when named, only has to be of the instance's tenant.
   */
  check: 'access' | 'tenant'
}

export function stateOf(stored: StoredContext): ProcessState {
  return { processInstance: stored.processInstance, dataInstance: stored.dataInstance }
}

/**
 * The instance (404 wm3001 for another tenant's, app's or process's), its model and an environment.
 * `loaded`: the instance as the caller already read it (a page of a bulk job), checked the same way.
 */
export async function loadInstance(
  deps: InstanceDependencies,
  actor: Actor | null,
  lookup: InstanceLookup,
  loaded?: StoredContext,
): Promise<LoadedInstance> {
  const { instances, models, environments } = deps
  const stored = loaded ?? (await instances.load(lookup.processInstanceId))
  if (actor && lookup.check === 'access') instances.assertAccess(actor, stored)
  const foreign =
    (actor !== null && !sameTenant(actor, stored)) ||
    (lookup.appId !== undefined && lookup.appId !== stored.appId) ||
    (lookup.processId !== undefined && lookup.processId !== stored.processId) ||
    (lookup.businessKey !== undefined && lookup.businessKey !== stored.businessKey)
  if (foreign) throw instances.notFound(lookup.processInstanceId)
  const compiled = await models.ofInstance(stored.processInstance)
  const env = await environments.create({
    actor: actor ? runtimeUserOf(actor) : SYSTEM_USER,
    appId: stored.appId,
    organizationId: stored.organizationId,
    additionalHeaders: lookup.additionalHeaders,
  })
  return { stored, compiled, env }
}

/** The instance's task (404 wm3005), which must be open (409 wm3041). */
export function openTaskOf(fail: ErrorFactory<EngineErrorCode>, stored: StoredContext, taskId: string): Task {
  const task = stored.processInstance.tasks.find((candidate) => candidate.taskId === taskId)
  if (!task) throw fail('wm3005', { args: [taskId], parameters: { taskId, processInstanceId: stored._id } })
  if (task.status !== 'open') throw fail('wm3041', { args: [taskId], parameters: { taskId, processInstanceId: stored._id } })
  return task
}
