/**
 * The escalation jobs of new tasks: one `escalation` batch job per escalation of a created task's
 * step, due `after` the task's creation, inserted in the same atomic commit as the change that
 * created the task (instances/service.ts). The batch worker claims each exactly once across every
 * engine over the store; jobs/escalations.ts runs it.
 */
import { afterDuration } from '../../../model/duration.js'
import type { AtomicWrite } from '../../../store/port.js'
import { Collections } from '../../../store/collections.js'
import { newBatchJob } from './batch/repository.js'
import type { CompiledProcess, ProcessInstance, RuntimeEffect } from '../../../runtime/types.js'

/** What an escalation job names: the task and the position of the escalation in its step's `escalations`. */
export interface EscalationPayload {
  processInstanceId: string
  taskId: string
  /** The step the task was created at (for the record; the task's step when the job runs decides). */
  stepId: string
  position: number
}

export function escalationPayloadOf(payload: Record<string, unknown>): EscalationPayload | null {
  const { processInstanceId, taskId, stepId, position } = payload
  if (typeof processInstanceId !== 'string' || typeof taskId !== 'string' || typeof stepId !== 'string') return null
  if (typeof position !== 'number' || !Number.isInteger(position) || position < 0) return null
  return { processInstanceId, taskId, stepId, position }
}

/** The batch-job inserts for the escalations of the tasks `effects` created. */
export function escalationJobWrites(
  instance: ProcessInstance,
  effects: readonly RuntimeEffect[],
  compiled: Pick<CompiledProcess, 'step'>,
  now: Date,
): AtomicWrite[] {
  const writes: AtomicWrite[] = []
  for (const effect of effects) {
    if (effect.kind !== 'taskCreated') continue
    const { task } = effect
    const step = compiled.step(task.stepId)
    if (step?.type !== 'userTask' || !step.escalations) continue
    step.escalations.forEach((escalation, position) => {
      const payload: EscalationPayload = {
        processInstanceId: instance.processInstanceId,
        taskId: task.taskId,
        stepId: task.stepId,
        position,
      }
      const job = newBatchJob(
        {
          kind: 'escalation',
          appId: instance.appId,
          organizationId: instance.organizationId,
          payload: { ...payload },
          dueAt: afterDuration(new Date(task.createdAt), escalation.after),
        },
        now,
      )
      writes.push({ collection: Collections.batchJobs, kind: 'insertOne', doc: { ...job } })
    })
  }
  return writes
}
