/**
 * Process control (docs/reference/lifecycle.md#suspending-resuming-cancelling): suspending, resuming
 * and cancelling an instance. Each is one compare-and-set commit with its activity (`suspended`,
 * `resumed`, `cancelled`, with the reason and the user) and its notification (`Suspended`, `Resumed`, `Cancelled`). While an instance is
 * suspended the commit refuses every other change (instances/service.ts), so nothing here has to
 * guard the other routes.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ActivityType, NotificationEventType } from '../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { StoredContext } from '../../../store/collections.js'
import { type Authorization, mayActForOthers } from '../instances/authorization.js'
import { type InstanceDependencies, loadInstance } from '../instances/loaded-instance.js'
import { isSuspended } from '../instances/service.js'
import type { TaskLockRepository } from '../tasks/locks.js'
import type { ProcessInstance, ProcessState, RuntimeEffect } from '../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    processControl: ProcessControl
  }
}

export type ControlOperation = 'suspend' | 'resume' | 'cancel'

/** What an operation makes of an instance, or why it cannot (the state it is in). */
type Outcome = { state: ProcessState; effects: RuntimeEffect[] } | { refused: true }

interface OperationSpec {
  activity: ActivityType
  event: NotificationEventType
  /** The word of the 409 wm3141 message: "it cannot be <past>". */
  past: string
  apply(instance: ProcessInstance, dataInstance: ProcessState['dataInstance'], now: string): Outcome
  /** The instance is already as the operation would leave it (a bulk job run again counts it done). */
  reached(instance: ProcessInstance): boolean
}

function ended(instance: ProcessInstance): boolean {
  return instance.processStatus === 'completed' || instance.processStatus === 'cancelled'
}

/** The instance without its suspension bookkeeping. */
function withoutSuspension(instance: ProcessInstance): ProcessInstance {
  const { suspendedFrom: _from, ...rest } = instance
  return rest
}

/** Open tasks cancelled, every thread done, the process cancelled; the effects name the cancelled tasks. */
export function cancelledState(
  instance: ProcessInstance,
  dataInstance: ProcessState['dataInstance'],
  now: string,
): { state: ProcessState; effects: RuntimeEffect[] } {
  const effects: RuntimeEffect[] = []
  const tasks = instance.tasks.map((task) => {
    if (task.status !== 'open') return task
    const cancelled = { ...task, status: 'cancelled' as const, completedAt: now }
    effects.push({ kind: 'taskCancelled', task: cancelled })
    return cancelled
  })
  const threads = instance.threads.map((thread) => ({ ...thread, status: 'done' as const }))
  return {
    state: { processInstance: { ...withoutSuspension(instance), tasks, threads, processStatus: 'cancelled' }, dataInstance },
    effects,
  }
}

const OPERATIONS: Record<ControlOperation, OperationSpec> = {
  suspend: {
    activity: 'suspended',
    event: 'Suspended',
    past: 'suspended',
    apply: (instance, dataInstance) => {
      const from = instance.processStatus
      if (from !== 'running' && from !== 'failed') return { refused: true }
      return { state: { processInstance: { ...instance, processStatus: 'suspended', suspendedFrom: from }, dataInstance }, effects: [] }
    },
    reached: (instance) => isSuspended(instance),
  },
  resume: {
    activity: 'resumed',
    event: 'Resumed',
    past: 'resumed',
    apply: (instance, dataInstance) => {
      if (!isSuspended(instance)) return { refused: true }
      return {
        state: { processInstance: { ...withoutSuspension(instance), processStatus: instance.suspendedFrom ?? 'running' }, dataInstance },
        effects: [],
      }
    },
    reached: (instance) => !isSuspended(instance) && !ended(instance),
  },
  cancel: {
    activity: 'cancelled',
    event: 'Cancelled',
    past: 'cancelled',
    apply: (instance, dataInstance, now) => (ended(instance) ? { refused: true } : cancelledState(instance, dataInstance, now)),
    reached: (instance) => instance.processStatus === 'cancelled',
  },
}

export interface ControlRequest {
  reason?: string | undefined
  appId?: string | undefined
  additionalHeaders?: string | string[] | undefined
}

export interface ProcessControlDependencies extends InstanceDependencies {
  authorization: Authorization
  locks: TaskLockRepository
}

export class ProcessControl {
  private readonly fail: ErrorFactory<EngineErrorCode>

  constructor(private readonly deps: ProcessControlDependencies) {
    this.fail = deps.fail
  }

  /**
   * Applies the operation to the instance (404 wm3001 for another tenant's, 403 wm4031 for a caller
   * who may not, 409 wm3141 when its state does not allow it). Suspend and resume: admins and
   * system users; cancel: them and the initiator.
   */
  async run(operation: ControlOperation, actor: Actor, processInstanceId: string, request: ControlRequest): Promise<{ isSuccess: true }> {
    // Suspending and resuming are for admins whatever the instance: refused before it is even read.
    if (operation !== 'cancel') this.deps.authorization.assertMayActForOthers(actor, `${operation} process instances`)
    const stored = await this.deps.instances.load(processInstanceId)
    await this.applyTo(operation, actor, stored, request)
    return { isSuccess: true }
  }

  /**
   * The operation on an instance already read (a bulk job's page): `alreadyDone` (a bulk job run
   * again) leaves an instance that is already as asked alone and answers false; true when stored.
   */
  async applyTo(
    operation: ControlOperation,
    actor: Actor,
    stored: StoredContext,
    request: ControlRequest,
    alreadyDone = false,
  ): Promise<boolean> {
    const spec = OPERATIONS[operation]
    const { compiled, env } = await loadInstance(
      this.deps,
      actor,
      { processInstanceId: stored._id, appId: request.appId, additionalHeaders: request.additionalHeaders, check: 'tenant' },
      stored,
    )
    if (operation === 'cancel' && !mayActForOthers(actor) && stored.initiator !== actor.userId) {
      this.deps.authorization.assertMayActForOthers(actor, 'cancel a process instance the user did not start')
    }
    if (alreadyDone && spec.reached(stored.processInstance)) return false
    const outcome = spec.apply(stored.processInstance, stored.dataInstance, env.now().toISOString())
    if ('refused' in outcome) {
      throw this.fail('wm3141', {
        args: [stored._id, stored.processStatus, spec.past],
        parameters: { processInstanceId: stored._id, processStatus: stored.processStatus },
      })
    }
    const cancelledTasks = outcome.effects.flatMap((effect) => (effect.kind === 'taskCancelled' ? [effect.task.taskId] : []))
    await this.deps.instances.commit({
      previous: stored,
      state: outcome.state,
      effects: outcome.effects,
      compiled,
      env,
      actor,
      event: spec.event,
      activities: [
        {
          type: spec.activity,
          details: {
            ...(request.reason === undefined ? {} : { reason: request.reason }),
            processStatus: outcome.state.processInstance.processStatus,
          },
        },
      ],
      allowedWhileSuspended: true,
      // The cancelled tasks' locks mean nothing any more: they go with the change.
      writes: cancelledTasks.map((taskId) => this.deps.locks.taskRelease(taskId)),
    })
    return true
  }
}

async function processControlPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate(
    'processControl',
    new ProcessControl({
      instances: fastify.processInstances,
      models: fastify.processModels,
      environments: fastify.runEnvironments,
      authorization: fastify.authorization,
      locks: fastify.taskLocks,
      fail: fastify.fail,
    }),
  )
}

export default fp(processControlPlugin, {
  name: 'process-control',
  dependencies: ['process-instances', 'process-models', 'run-environments', 'authorization', 'task-locks-repository', 'errors'],
})
