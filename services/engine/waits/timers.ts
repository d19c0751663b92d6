/**
 * Timers (docs/models.md#timer): a thread that starts waiting at a timer step, or at a receive step
 * with a timeout, gets one `timer` batch job due at its `dueAt`, under the unique schedule key
 * `timer:<timerId>`, inserted in the same atomic commit; the change that ends the wait (the timer
 * itself, the message, a cancel, a step change) removes it if it has not run. The batch worker of
 * any engine claims a due job exactly once; the job moves the thread on with a compare-and-set
 * commit, so even a job run twice fires the timer once. While the instance is suspended the job
 * waits; resuming brings the instance's timer jobs forward, so those that fell due fire then.
 */
import type { AtomicWrite } from '../../../store/port.js'
import { Collections } from '../../../store/collections.js'
import type { ChangeToStore } from '../instances/commit-hooks.js'
import type { BatchJobHandler } from '../jobs/batch/handlers.js'
import { PermanentJobError } from '../jobs/batch/handlers.js'
import { NOT_CLAIMED, newBatchJob } from '../jobs/batch/repository.js'
import { type MoveThreadDependencies, moveThreadForJob } from './move-thread.js'
import { changedWaits, jobsDueOnResume } from './thread-waits.js'

export interface TimerPayload {
  processInstanceId: string
  threadId: string
  timerId: string
}

function timerPayloadOf(payload: Record<string, unknown>): TimerPayload {
  const { processInstanceId, threadId, timerId } = payload
  if (typeof processInstanceId !== 'string' || typeof threadId !== 'string' || typeof timerId !== 'string') {
    throw new PermanentJobError(`a timer job needs processInstanceId, threadId, timerId: ${JSON.stringify(payload)}`)
  }
  return { processInstanceId, threadId, timerId }
}

export const timerScheduleKey = (timerId: string): string => `timer:${timerId}`

/** The timer jobs a change inserts, removes or (resuming the instance) brings forward. */
export function timerJobWrites({ previous, state, now }: Pick<ChangeToStore, 'previous' | 'state' | 'now'>): AtomicWrite[] {
  const instance = state.processInstance
  const { started, ended } = changedWaits(previous, state, 'timer', (thread) => thread.timer.timerId)
  const writes: AtomicWrite[] = started.map((thread) => {
    const payload: TimerPayload = {
      processInstanceId: instance.processInstanceId,
      threadId: thread.threadId,
      timerId: thread.timer.timerId,
    }
    const job = newBatchJob(
      {
        kind: 'timer',
        appId: instance.appId,
        organizationId: instance.organizationId,
        payload: { ...payload },
        dueAt: new Date(thread.timer.dueAt),
        scheduleKey: timerScheduleKey(thread.timer.timerId),
      },
      now,
    )
    return { collection: Collections.batchJobs, kind: 'insertOne', doc: { ...job } }
  })
  for (const thread of ended) {
    writes.push({
      collection: Collections.batchJobs,
      kind: 'deleteMany',
      filter: { scheduleKey: timerScheduleKey(thread.timer.timerId), status: NOT_CLAIMED },
    })
  }
  writes.push(...jobsDueOnResume(previous, state, 'timer', now))
  return writes
}

/** Runs a timer job: the thread moves on from its timer step (or its receive step's timeout) with a `timerFired` activity. */
export function timerHandler(deps: MoveThreadDependencies): BatchJobHandler {
  return async (job, context) => {
    const { processInstanceId, threadId, timerId } = timerPayloadOf(job.payload)
    const outcome = await moveThreadForJob(deps, processInstanceId, threadId, context.now, {
      waitsFor: (thread) => thread.timer?.timerId === timerId,
      notBefore: (thread) => (thread.timer ? new Date(thread.timer.dueAt) : undefined),
      move: (compiled, state, env) => compiled.fireTimer(state, threadId, timerId, env),
      activity: (thread) => ({
        type: 'timerFired',
        stepId: thread.stepId,
        details: { threadId, timerId, dueAt: thread.timer?.dueAt, ...(thread.message ? { timeout: true } : {}) },
      }),
    })
    context.log.debug({ outcome }, 'timer job ran')
  }
}
