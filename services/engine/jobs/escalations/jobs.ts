/**
 * The escalation jobs of new tasks: one `escalation` batch job per escalation of a created task's
 * step, due `after` the task's creation, inserted in the same atomic commit as the change that
 * created the task (instances/service.ts), under the unique schedule key
 * `escalation:<taskId>:<position>`. The change that ends the task (its action, a cancel, a step
 * change) removes those not yet claimed, so ended tasks leave no job behind for days. The batch
 * worker claims each exactly once across every engine over the store; service.ts runs it.
 */
import { afterDuration } from '../../../../model/duration.js'
import type { AtomicWrite } from '../../../../store/port.js'
import { Collections } from '../../../../store/collections.js'
import { NOT_CLAIMED, newBatchJob } from '../batch/repository.js'
import type { CompiledProcess, EscalationDefinition, ProcessInstance, RuntimeEffect, Task } from '../../../../runtime/types.js'

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

export const escalationScheduleKey = (taskId: string, position: number): string => `escalation:${taskId}:${position}`

function escalationsOf(compiled: Pick<CompiledProcess, 'step'>, task: Task): EscalationDefinition[] {
  const step = compiled.step(task.stepId)
  return step?.type === 'userTask' ? (step.escalations ?? []) : []
}

/** The removal of the escalation jobs, not yet claimed, of the tasks open in `previous` and no longer in `instance`. */
function endedTaskJobWrites(previous: ProcessInstance | undefined, instance: ProcessInstance, compiled: Pick<CompiledProcess, 'step'>) {
  const stillOpen = new Set(instance.tasks.filter((task) => task.status === 'open').map((task) => task.taskId))
  const keys = (previous?.tasks ?? [])
    .filter((task) => task.status === 'open' && !stillOpen.has(task.taskId))
    .flatMap((task) => escalationsOf(compiled, task).map((_, position) => escalationScheduleKey(task.taskId, position)))
  if (keys.length === 0) return []
  return [{ collection: Collections.batchJobs, kind: 'deleteMany', filter: { scheduleKey: { $in: keys }, status: NOT_CLAIMED } } as const]
}

/** The batch-job inserts for the escalations of the tasks `effects` created, and the removal of those of the tasks the change ended. */
export function escalationJobWrites(
  previous: ProcessInstance | undefined,
  instance: ProcessInstance,
  effects: readonly RuntimeEffect[],
  compiled: Pick<CompiledProcess, 'step'>,
  now: Date,
): AtomicWrite[] {
  const writes: AtomicWrite[] = [...endedTaskJobWrites(previous, instance, compiled)]
  for (const effect of effects) {
    if (effect.kind !== 'taskCreated') continue
    const { task } = effect
    escalationsOf(compiled, task).forEach((escalation, position) => {
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
          scheduleKey: escalationScheduleKey(task.taskId, position),
        },
        now,
      )
      writes.push({ collection: Collections.batchJobs, kind: 'insertOne', doc: { ...job } })
    })
  }
  return writes
}
