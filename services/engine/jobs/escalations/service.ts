/**
 * Runs one escalation job: the escalation at `position` of the task's step, in the model version
 * the instance runs now. It does nothing when the task has ended (or the instance is gone), when
 * the escalation already ran on the task, or when the step has no such escalation (a migration
 * changed it); it waits while the instance is suspended. What it does is one compare-and-set
 * commit of the instance with an `escalated` activity and an `Escalated` notification, so even a
 * job run twice (a lapsed lease) escalates once: the second run finds the escalation recorded.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../../openapi/generated/errors.js'
import { type ErrorFactory, isServiceError } from '../../../../plugins/errors/service-error.js'
import type { Actor } from '../../../../plugins/identity/actor.js'
import type { StoredContext } from '../../../../store/collections.js'
import { endTask } from '../../tasks/actions.js'
import { JobDeferral, PermanentJobError, type BatchJobHandler } from '../batch/handlers.js'
import { commitChange } from '../../instances/loaded-instance-operations.js'
import { stateOf } from '../../instances/loaded-instance.js'
import { runtimeCall } from '../../instances/runtime-errors.js'
import { type ActivityEntry, type ProcessInstances, isSuspended } from '../../instances/service.js'
import type { TaskLockRepository } from '../../tasks/locks.js'
import type { ProcessModels } from '../../models/service.js'
import { type RunEnvironments, SYSTEM_USER } from '../../flow-host/environment.js'
import type { EscalationDefinition } from '../../../../runtime/types.js'
import { ENGINE_DEPENDENCY_PLUGINS, engineDependencies } from '../../instances/dependencies.js'
import { escalationJobWrites, escalationPayloadOf, escalationsDueAt } from './jobs.js'
import { EscalationPromoter } from './promoter.js'
import { PollLoop } from '../poll-loop.js'

/**
 * How long an escalation of a suspended instance waits before it looks again: resuming does not
 * reach the job, so it runs at most this long after the instance is resumed.
 */
export const SUSPENDED_RECHECK_MS = 60_000

export interface EscalationDependencies {
  instances: ProcessInstances
  models: ProcessModels
  environments: RunEnvironments
  locks: TaskLockRepository
  fail: ErrorFactory<EngineErrorCode>
}

/** What running a job came to, for its log line. */
export type EscalationOutcome = 'escalated' | 'taskEnded' | 'alreadyEscalated' | 'noSuchEscalation'

/** The system, acting for nobody in the instance's tenant: who takes an escalation's action. */
function systemActor(stored: StoredContext): Actor {
  return { ...SYSTEM_USER, organizationId: stored.organizationId, appId: stored.appId, isSystemUser: true }
}

export class EscalationService {
  constructor(private readonly deps: EscalationDependencies) {}

  async run(payloadFields: Record<string, unknown>, now: Date): Promise<EscalationOutcome> {
    const payload = escalationPayloadOf(payloadFields)
    if (!payload) {
      throw new PermanentJobError(`an escalation job needs processInstanceId, taskId, stepId, position: ${JSON.stringify(payloadFields)}`)
    }
    const { instances, models, environments, fail } = this.deps
    const stored = await instances.find(payload.processInstanceId)
    const task = stored?.processInstance.tasks.find((candidate) => candidate.taskId === payload.taskId)
    if (!stored || !task || task.status !== 'open') return 'taskEnded'
    if (task.escalated?.includes(payload.position)) return 'alreadyEscalated'
    if (isSuspended(stored)) {
      throw new JobDeferral(new Date(now.getTime() + SUSPENDED_RECHECK_MS), `process instance ${stored._id} is suspended`)
    }
    const compiled = await models.ofInstance(stored.processInstance)
    const step = compiled.step(task.stepId)
    const escalation = step?.type === 'userTask' ? step.escalations?.[payload.position] : undefined
    if (!escalation) return 'noSuchEscalation'
    const env = await environments.create({ actor: SYSTEM_USER, appId: stored.appId, organizationId: stored.organizationId })
    const actor = systemActor(stored)
    const loaded = { stored, task, compiled, env }
    const activity: ActivityEntry = {
      type: 'escalated',
      taskId: task.taskId,
      stepId: task.stepId,
      details: escalationDetails(escalation, payload.position),
    }
    try {
      if (escalation.do === 'action') {
        // The same path as a user's action: the model's action, userTaskActivity, the lock released, the process advanced.
        await endTask(this.deps, loaded, {
          actor,
          actionType: escalation.actionType ?? 'complete',
          details: { escalation: payload.position },
          event: 'Escalated',
          activities: [activity],
        })
      } else {
        const transition = await runtimeCall(fail, 'advance', () => compiled.escalate(stateOf(stored), task.taskId, payload.position, env))
        const assignee = transition.state.processInstance.tasks.find((candidate) => candidate.taskId === task.taskId)?.userId
        if (escalation.do === 'assignToUser' && assignee !== undefined) activity.details = { ...activity.details, targetUserId: assignee }
        await commitChange(this.deps, loaded, actor, {
          state: transition.state,
          effects: transition.effects,
          event: 'Escalated',
          activities: [activity],
        })
      }
    } catch (error) {
      // Someone changed the instance meanwhile: a plain failure, so the worker tries again on the new state.
      if (isServiceError(error) && error.code === 'wm3042')
        throw new Error(`process instance ${stored._id} changed while escalating; trying again`, { cause: error })
      throw error
    }
    return 'escalated'
  }
}

function escalationDetails(escalation: EscalationDefinition, position: number): Record<string, unknown> {
  return {
    position,
    do: escalation.do,
    after: escalation.after,
    ...(escalation.swimlane === undefined ? {} : { swimlane: escalation.swimlane }),
    ...(escalation.do === 'action' ? { actionType: escalation.actionType ?? 'complete' } : {}),
    ...(escalation.note === undefined ? {} : { note: escalation.note }),
  }
}

export function escalationHandler(service: EscalationService): BatchJobHandler {
  return async (job, context) => {
    const outcome = await service.run(job.payload, context.now)
    context.log.debug({ outcome }, 'escalation job ran')
  }
}

export interface EscalationsPluginOptions {
  /** How often the promoter looks for escalations coming due (promoter.ts). */
  pollMs: number
}

async function escalationsPlugin(fastify: FastifyInstance, options: EscalationsPluginOptions): Promise<void> {
  const service = new EscalationService(engineDependencies(fastify))
  fastify.batchHandlers.set('escalation', escalationHandler(service))
  // The jobs of the escalations coming due within the horizon are stored with the change that creates
  // their task, or not at all; those of the tasks it ends leave with it. The instance's
  // `escalationsDueAt` tells the promoter about the others.
  fastify.processInstances.addCommitHook({
    name: 'escalation jobs',
    writesFor: ({ previous, state, effects, compiled, now }) =>
      escalationJobWrites(previous?.processInstance, state.processInstance, effects, compiled, now),
    fieldsFor: ({ state, compiled }) => ({ escalationsDueAt: escalationsDueAt(state.processInstance, compiled) }),
  })
  const promoter = new EscalationPromoter({
    contexts: fastify.contexts,
    models: fastify.processModels,
    batchJobs: fastify.batchJobs,
    now: fastify.clock,
    log: fastify.log.child({ component: 'escalations' }),
  })
  const loop = new PollLoop(
    options.pollMs,
    async () => {
      // Jobs already due (their time passed while no engine ran): run them without waiting for the worker's next poll.
      if ((await promoter.promote()) > 0) fastify.batchWorker.wake()
    },
    (error) => fastify.log.error({ err: error }, 'the escalation promoter failed; it tries again at its next poll'),
  )
  fastify.addHook('onReady', async () => loop.start())
  fastify.addHook('preClose', async () => loop.stop(options.pollMs))
}

export default fp(escalationsPlugin, {
  name: 'escalations',
  dependencies: [...ENGINE_DEPENDENCY_PLUGINS, 'batch-jobs', 'batch-worker'],
})
