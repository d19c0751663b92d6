/**
 * What a stored change of a process instance adds to the workflow metrics: read from the runtime's
 * effects once the change is committed, so a rolled-back or lost change counts nothing.
 */
import type { EngineMetrics } from '../../../lib/telemetry/engine-metrics.js'
import type { RuntimeEffect } from '../../../runtime/types.js'

export interface CommittedChange {
  /** The change created the instance. */
  started: boolean
  processId: string
  effects: readonly RuntimeEffect[]
}

export function recordCommittedChange(metrics: EngineMetrics, change: CommittedChange): void {
  const { processId } = change
  if (change.started) metrics.instanceStarted(processId)
  for (const effect of change.effects) {
    switch (effect.kind) {
      case 'taskCreated':
        metrics.taskOpened(processId, effect.task.stepId)
        break
      case 'taskEnded': {
        const { task } = effect
        const openSeconds = task.completedAt === undefined ? -1 : (Date.parse(task.completedAt) - Date.parse(task.createdAt)) / 1000
        metrics.taskCompleted(processId, task.stepId, task.actionType ?? 'complete', openSeconds)
        break
      }
      case 'taskCancelled':
        metrics.taskCancelled(processId, effect.task.stepId)
        break
      case 'threadFailed':
        metrics.instanceFailed(processId)
        break
      case 'processEnded':
        metrics.instanceEnded(processId, effect.status)
        break
      case 'timerFired':
      case 'messageReceived':
      case 'childReturned':
        metrics.waitEnded(processId, effect.kind)
        break
    }
  }
}
