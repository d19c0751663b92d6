/**
 * The escalation jobs of user tasks: one `escalation` batch job per escalation of a task's step,
 * due `after` the task's creation, under the unique schedule key `escalation:<taskId>:<position>`.
 * The batch worker claims each exactly once across every engine over the store; service.ts runs it.
 *
 * A job is stored once its escalation falls due within ESCALATION_HORIZON_MS: by the change that
 * creates the task (in its atomic commit, instances/service.ts) when it is that near, else by the
 * promoter (promoter.ts) once it comes that near. Meanwhile the instance's `escalationsDueAt`,
 * written with every change, says when each escalation that has not run falls due, and that is
 * what the promoter reads. Most tasks end long before their escalations (a leave request's falls
 * due after three days), so most never get a job: no insert when the task is created and no
 * removal when it ends, on the path of every request (docs/reference/jobs.md#escalations). The
 * change that ends a task removes its jobs not yet claimed that may have been stored.
 */
import { afterDuration } from '../../../../model/duration.js'
import type { AtomicWrite } from '../../../../store/port.js'
import { Collections } from '../../../../store/collections.js'
import { NOT_CLAIMED, type NewBatchJob, newBatchJob } from '../batch/repository.js'
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

/** How far ahead of its time an escalation's job is stored. */
export const ESCALATION_HORIZON_MS = 60 * 60 * 1000

/** One escalation of a task: where it is in the step's `escalations`, and when it falls due. */
export interface TaskEscalation {
  task: Task
  position: number
  dueAt: Date
}

function escalationsOf(compiled: Pick<CompiledProcess, 'step'>, task: Task): EscalationDefinition[] {
  const step = compiled.step(task.stepId)
  return step?.type === 'userTask' ? (step.escalations ?? []) : []
}

/** The escalations of `task`'s step, each with its due time: `after` the task's creation. */
function taskEscalations(compiled: Pick<CompiledProcess, 'step'>, task: Task): TaskEscalation[] {
  const escalations = escalationsOf(compiled, task)
  if (escalations.length === 0) return []
  const createdAt = new Date(task.createdAt)
  return escalations.map((escalation, position) => ({ task, position, dueAt: afterDuration(createdAt, escalation.after) }))
}

/** The escalations of the instance's open tasks that have not run yet. */
export function pendingEscalations(instance: ProcessInstance, compiled: Pick<CompiledProcess, 'step'>): TaskEscalation[] {
  return instance.tasks
    .filter((task) => task.status === 'open')
    .flatMap((task) => taskEscalations(compiled, task).filter(({ position }) => !task.escalated?.includes(position)))
}

/** The instance's `escalationsDueAt`: when each escalation that has not run falls due (the promoter's index, promoter.ts). */
export function escalationsDueAt(instance: ProcessInstance, compiled: Pick<CompiledProcess, 'step'>): Date[] {
  return pendingEscalations(instance, compiled).map(({ dueAt }) => dueAt)
}

/** Whether an escalation due at `dueAt` may have its job stored by `now`: it falls due within the horizon. */
export function withinHorizon(dueAt: Date, now: Date): boolean {
  return dueAt.getTime() <= now.getTime() + ESCALATION_HORIZON_MS
}

/** The job of one escalation, as stored. */
export function escalationJob(instance: ProcessInstance, { task, position, dueAt }: TaskEscalation): NewBatchJob {
  const payload: EscalationPayload = { processInstanceId: instance.processInstanceId, taskId: task.taskId, stepId: task.stepId, position }
  return {
    kind: 'escalation',
    appId: instance.appId,
    organizationId: instance.organizationId,
    payload: { ...payload },
    dueAt,
    scheduleKey: escalationScheduleKey(task.taskId, position),
  }
}

/**
 * The removal of the escalation jobs, not yet claimed, of the tasks open in `previous` and no longer
 * in `instance`: only those that may have been stored by `now`, the ones due within the horizon.
 */
function endedTaskJobWrites(
  previous: ProcessInstance | undefined,
  instance: ProcessInstance,
  compiled: Pick<CompiledProcess, 'step'>,
  now: Date,
): AtomicWrite[] {
  const stillOpen = new Set(instance.tasks.filter((task) => task.status === 'open').map((task) => task.taskId))
  const keys = (previous?.tasks ?? [])
    .filter((task) => task.status === 'open' && !stillOpen.has(task.taskId))
    .flatMap((task) => taskEscalations(compiled, task))
    .filter(({ dueAt }) => withinHorizon(dueAt, now))
    .map(({ task, position }) => escalationScheduleKey(task.taskId, position))
  if (keys.length === 0) return []
  return [{ collection: Collections.batchJobs, kind: 'deleteMany', filter: { scheduleKey: { $in: keys }, status: NOT_CLAIMED } }]
}

/**
 * The batch-job inserts for the escalations of the tasks `effects` created that fall due within the
 * horizon, and the removal of those of the tasks the change ended.
 */
export function escalationJobWrites(
  previous: ProcessInstance | undefined,
  instance: ProcessInstance,
  effects: readonly RuntimeEffect[],
  compiled: Pick<CompiledProcess, 'step'>,
  now: Date,
): AtomicWrite[] {
  const writes = endedTaskJobWrites(previous, instance, compiled, now)
  for (const effect of effects) {
    if (effect.kind !== 'taskCreated') continue
    for (const escalation of taskEscalations(compiled, effect.task)) {
      if (!withinHorizon(escalation.dueAt, now)) continue
      writes.push({
        collection: Collections.batchJobs,
        kind: 'insertOne',
        doc: { ...newBatchJob(escalationJob(instance, escalation), now) },
      })
    }
  }
  return writes
}
