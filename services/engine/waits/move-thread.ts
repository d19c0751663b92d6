/**
 * Moving a waiting thread on, for the jobs of waiting threads and for a delivered message: the
 * stored instance, its model version and a system environment; the runtime's move (which checks
 * that the thread still waits for exactly this event); one compare-and-set commit with its
 * activity. Run twice (a lapsed lease, two engines, a repeated request), the second run finds the
 * thread no longer waiting, or loses the compare-and-set and looks again: the event moves the
 * thread once.
 */
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import { type ErrorFactory, isServiceError } from '../../../plugins/errors/service-error.js'
import type { StoredContext } from '../../../store/collections.js'
import type { AtomicWrite } from '../../../store/port.js'
import type { CompiledProcess, ProcessState, RunEnvironment, Thread, Transition } from '../../../runtime/types.js'
import { type RequestEnvironment, type RunEnvironments, SYSTEM_USER } from '../flow-host/environment.js'
import { JobDeferral } from '../jobs/batch/handlers.js'
import { SUSPENDED_RECHECK_MS } from '../jobs/escalations/service.js'
import { stateOf } from '../instances/loaded-instance.js'
import { runtimeCall } from '../instances/runtime-errors.js'
import { type ActingUser, type ActivityEntry, type ProcessInstances, isSuspended } from '../instances/service.js'
import type { ProcessModels } from '../models/service.js'

export interface MoveThreadDependencies {
  instances: ProcessInstances
  models: ProcessModels
  environments: RunEnvironments
  fail: ErrorFactory<EngineErrorCode>
}

export interface ThreadMove {
  /** Does the thread still wait for this event (its timer, its subscription, its child)? */
  waitsFor(thread: Thread): boolean
  /** The runtime's move of the thread, on the stored state. */
  move(compiled: CompiledProcess, state: ProcessState, env: RunEnvironment): Promise<Transition>
  /** The activity the move records. */
  activity(thread: Thread, transition: Transition): ActivityEntry
  /** Writes stored in the same atomic batch (a buffered message marked as taken). */
  alongside?: readonly AtomicWrite[]
}

/** The waiting thread `threadId` of the stored instance, if it still waits for the event. */
export function threadWaitingFor(stored: StoredContext | null, threadId: string, move: Pick<ThreadMove, 'waitsFor'>): Thread | undefined {
  const thread = stored?.processInstance.threads.find((candidate) => candidate.threadId === threadId)
  const ended = stored?.processStatus === 'completed' || stored?.processStatus === 'cancelled'
  return thread && !ended && thread.status === 'waiting' && move.waitsFor(thread) ? thread : undefined
}

/**
 * Commits the move of `thread` of the stored instance (409 wm3140 while it is suspended, 409
 * wm3042 when it changed since it was read); answers the stored instance.
 */
export async function commitThreadMove(
  deps: MoveThreadDependencies,
  stored: StoredContext,
  thread: Thread,
  move: ThreadMove,
  env?: RequestEnvironment,
  actor: ActingUser | null = null,
): Promise<StoredContext> {
  const compiled = await deps.models.ofInstance(stored.processInstance)
  const environment =
    env ?? (await deps.environments.create({ actor: SYSTEM_USER, appId: stored.appId, organizationId: stored.organizationId }))
  const transition = await runtimeCall(deps.fail, 'advance', () => move.move(compiled, stateOf(stored), environment))
  return deps.instances.commit({
    previous: stored,
    state: transition.state,
    effects: transition.effects,
    compiled,
    env: environment,
    actor,
    event: 'Updated',
    activities: [move.activity(thread, transition)],
    ...(move.alongside ? { writes: move.alongside } : {}),
  })
}

export type JobMoveOutcome = 'moved' | 'notWaiting'

/**
 * A job's move of a waiting thread: nothing when the thread no longer waits for the event; it
 * waits while the instance is suspended (resuming brings the job forward) and until `notBefore`.
 */
export async function moveThreadForJob(
  deps: MoveThreadDependencies,
  processInstanceId: string,
  threadId: string,
  now: Date,
  move: ThreadMove & { notBefore?: (thread: Thread) => Date | undefined },
): Promise<JobMoveOutcome> {
  const stored = await deps.instances.find(processInstanceId)
  const thread = threadWaitingFor(stored, threadId, move)
  if (!stored || !thread) return 'notWaiting'
  if (isSuspended(stored)) {
    throw new JobDeferral(new Date(now.getTime() + SUSPENDED_RECHECK_MS), `process instance ${stored._id} is suspended`)
  }
  const notBefore = move.notBefore?.(thread)
  if (notBefore && notBefore.getTime() > now.getTime()) throw new JobDeferral(notBefore, `not due before ${notBefore.toISOString()}`)
  try {
    await commitThreadMove(deps, stored, thread, move)
  } catch (error) {
    // Someone changed the instance meanwhile: a plain failure, so the worker tries again on the new state.
    if (isServiceError(error) && error.code === 'wm3042')
      throw new Error(`process instance ${stored._id} changed while moving thread ${threadId} on; trying again`, { cause: error })
    throw error
  }
  return 'moved'
}
