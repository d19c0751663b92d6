/**
 * Starting process instances (`/context` without an instance, `/process/start`,
 * `/external/process/start`, and anything else that starts one) and their lightweight status.
 * A start validates the input against the latest live model version, runs the instance until it
 * waits, stores it, and sends the `Created` notification.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { type Actor, findActor } from '../../../plugins/identity/actor.js'
import type { Store } from '../../../store/port.js'
import type { StoredContext } from '../../../store/collections.js'
import { type Authorization, mayActOnTask, type Principal, sameTenant } from '../instances/authorization.js'
import { taskForForm } from '../tasks/form-task.js'
import type { ProcessInstances } from '../instances/service.js'
import { type RequestEnvironment, runtimeUserOf, type RunEnvironments, SYSTEM_USER } from '../flow-host/environment.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import type { ProcessModels } from '../models/service.js'
import type { ChildLink, CompiledProcess, JsonObject, ParentLink, ProcessStatus, RuntimeUser, Task } from '../../../runtime/types.js'
import { withFields } from '../../../lib/with-fields.js'

declare module 'fastify' {
  interface FastifyInstance {
    processStarter: ProcessStarter
  }
}

export interface StartCommand {
  /** The user of the request; null only for a start without one (a schedule's), which names its tenant. */
  actor: Actor | null
  appId: string
  processId: string
  input: JsonObject
  /** The tenant's organization when the model does not name one and there is no actor. */
  organizationId?: string | undefined
  /** Starts the instance on behalf of this user of the app (default: the actor). */
  initiatorUserId?: string | undefined
  /** Overrides the model's businessKey expression. */
  businessKey?: string | undefined
  additionalHeaders?: string | string[] | undefined
  /** Take the lock of the first task for the initiator (`/context`), when they may work on it. */
  lockFirstTask: boolean
  /**
   * The instance id, chosen by the caller to make the start idempotent: when an instance with it is
   * already stored (a scheduled job that ran again after a crash), that one is answered and no
   * second instance starts. A new UUID when absent.
   */
  processInstanceId?: string
  /** The model version to start (a callProcess step's `version`); the latest live one when absent. */
  modelVersion?: number | undefined
  /** The instance whose callProcess step starts this one (docs/reference/instances.md#parent-and-child-instances). */
  parent?: ParentLink
}

export interface Started {
  stored: StoredContext
  compiled: CompiledProcess
  env: RequestEnvironment
  /** The first task for the initiator's form (when the instance waits at one). */
  firstTask?: Task
  /** Holder of the first task's lock after the start (null: nobody), when a lock was asked for. */
  lockHolder?: string | null
}

export interface ProcessStatusSummary {
  tasks: Array<{ taskId: string; stepId: string; name: string }>
  processStatus: StoredContext['processStatus']
  parentInstance?: ParentLink
  childInstances?: Array<ChildLink & { processStatus?: ProcessStatus }>
}

export class ProcessStarter {
  constructor(
    private readonly store: Store,
    private readonly models: ProcessModels,
    private readonly environments: RunEnvironments,
    private readonly instances: ProcessInstances,
    private readonly locks: TaskLockRepository,
    private readonly authorization: Authorization,
    private readonly fail: ErrorFactory<EngineErrorCode>,
  ) {}

  async start(command: StartCommand): Promise<Started> {
    const { actor, appId, processId } = command
    // Another tenant's models are invisible to the user.
    if (actor && actor.appId !== appId)
      throw this.fail('wm3002', { args: [`${processId} in app ${appId}`], parameters: { processId, appId } })
    // Starting for another initiator is acting for others.
    if (actor && command.initiatorUserId !== undefined && command.initiatorUserId !== actor.userId) {
      this.authorization.assertMayActForOthers(actor, `start a process for ${command.initiatorUserId}`)
    }
    // The tenant is the pair: the actor's organization, else the one the (headless) command names,
    // else the only organization with a live model of the process in that app.
    const organizationId = actor?.organizationId ?? command.organizationId ?? (await this.models.resolveOrganizationId(appId, processId))
    const compiled =
      command.modelVersion === undefined
        ? await this.models.latest({ organizationId, appId }, processId)
        : await this.models.ofInstance({ organizationId, appId, processId, modelVersion: command.modelVersion })
    const initiator = await this.initiator(command, organizationId)
    const acting = actor ? runtimeUserOf(actor) : initiator
    const env = await this.environments.create({ actor: acting, appId, organizationId, additionalHeaders: command.additionalHeaders })
    // A large input is checked in the tenant's share of the worker pool, not on the engine's thread.
    const problems = await runtimeCall(this.fail, 'advance', () => compiled.validateInput(command.input, env))
    if (problems.length > 0) throw this.fail('wm3004', { args: [problems.join('; ')], parameters: { field: 'body.input' } })
    if (command.processInstanceId !== undefined) {
      const existing = await this.instances.find(command.processInstanceId)
      if (existing) return { stored: existing, compiled: await this.models.ofInstance(existing.processInstance), env }
    }
    const processInstanceId = command.processInstanceId ?? env.newInstanceId()
    const transition = await runtimeCall(this.fail, 'advance', () =>
      compiled.start(
        {
          input: command.input,
          processInstanceId,
          appId,
          organizationId,
          initiator,
          ...(command.businessKey ? { businessKey: command.businessKey } : {}),
          ...(command.parent ? { parent: command.parent } : {}),
        },
        env,
      ),
    )
    const created = transition.effects.flatMap((effect) => (effect.kind === 'taskCreated' ? [effect.task] : []))
    const initiatorPrincipal: Principal = withFields(initiator, { appId, organizationId })
    const firstTask = taskForForm(transition.state.processInstance, initiatorPrincipal, created)
    const lockFirstTask = command.lockFirstTask && firstTask && initiator !== SYSTEM_USER && mayActOnTask(initiatorPrincipal, firstTask)
    const stored = await this.instances.commit({
      state: transition.state,
      effects: transition.effects,
      compiled,
      env,
      actor: acting === SYSTEM_USER ? null : acting,
      event: 'Created',
      activities: [
        {
          type: 'start',
          details: {
            processId,
            modelVersion: compiled.model.version,
            initiator: initiator.userId,
            ...(command.parent ? { parentInstanceId: command.parent.processInstanceId } : {}),
          },
        },
      ],
      // The first task is this start's own: its lock is stored with it.
      ...(lockFirstTask && firstTask
        ? { writes: [this.locks.newTaskLock(firstTask.taskId, processInstanceId, initiator.userId, env.now())] }
        : {}),
    })

    const started: Started = { stored, compiled, env }
    if (firstTask) started.firstTask = firstTask
    if (lockFirstTask) started.lockHolder = initiator.userId
    return started
  }

  /** Open tasks and status of an instance the user is authorized on. */
  async status(principal: Principal, processInstanceId: string, appId: string | undefined): Promise<ProcessStatusSummary> {
    const stored = await this.instances.loadFor(principal, processInstanceId)
    if (appId !== undefined && appId !== stored.appId) throw this.instances.notFound(processInstanceId)
    const { parentInstance, childInstances } = stored.processInstance
    // Each child's status now: the parent keeps only the link.
    const children =
      childInstances &&
      (await Promise.all(
        childInstances.map(async (link) => {
          const child = await this.instances.find(link.processInstanceId)
          return { ...link, ...(child ? { processStatus: child.processStatus } : {}) }
        }),
      ))
    return {
      tasks: stored.processInstance.tasks
        .filter((task) => task.status === 'open')
        .map(({ taskId, stepId, name }) => ({ taskId, stepId, name })),
      processStatus: stored.processStatus,
      ...(parentInstance ? { parentInstance } : {}),
      ...(children ? { childInstances: children } : {}),
    }
  }

  /** `initiatorUserId` (a user of the app, 400 wm3006 otherwise), else the actor, else the system. */
  private async initiator(command: StartCommand, organizationId: string): Promise<RuntimeUser> {
    const { initiatorUserId, actor, appId } = command
    if (initiatorUserId === undefined || initiatorUserId === actor?.userId) return actor ? runtimeUserOf(actor) : SYSTEM_USER
    const user = await findActor(this.store, initiatorUserId)
    if (!user || !sameTenant(user, { appId, organizationId })) {
      throw this.fail('wm3006', { args: [initiatorUserId], parameters: { field: 'body.initiatorUserId' } })
    }
    return runtimeUserOf(user)
  }
}

async function processStarterPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate(
    'processStarter',
    new ProcessStarter(
      fastify.store,
      fastify.processModels,
      fastify.runEnvironments,
      fastify.processInstances,
      fastify.taskLocks,
      fastify.authorization,
      fastify.fail,
    ),
  )
}

export default fp(processStarterPlugin, {
  name: 'process-starter',
  dependencies: ['store', 'process-models', 'run-environments', 'process-instances', 'task-locks-repository', 'authorization', 'errors'],
})
