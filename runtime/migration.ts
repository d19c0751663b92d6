/**
 * Moving a running instance to another version of its model: every step it waits at (its open
 * tasks, its threads that are not done — waiting, active or failed — and the joins its branches wait
 * at), after the step mapping, must exist in the target version with the same step type; then the
 * instance runs on that version from the same places. Plain objects in and out.
 */
import type { ProcessInstance, StepDefinition } from './types.js'

export type StepMapping = Readonly<Record<string, string>>

export type MigrationPlan = { instance: ProcessInstance } | { reason: string }

/** The steps the instance waits at: its open tasks' steps and its unfinished threads' steps and joins. */
export function stepsWaitedAt(instance: ProcessInstance): string[] {
  const steps = new Set<string>()
  for (const task of instance.tasks) if (task.status === 'open') steps.add(task.stepId)
  for (const thread of instance.threads) {
    if (thread.status === 'done') continue
    steps.add(thread.stepId)
    if (thread.join !== undefined) steps.add(thread.join)
  }
  return [...steps]
}

/** The instance as it runs on `toVersion` (steps renamed through `mapping`), or why it cannot. */
export function planMigration(
  instance: ProcessInstance,
  from: Readonly<Record<string, StepDefinition>>,
  to: Readonly<Record<string, StepDefinition>>,
  toVersion: number,
  mapping: StepMapping,
): MigrationPlan {
  const mapped = (stepId: string): string => (Object.hasOwn(mapping, stepId) ? (mapping[stepId] as string) : stepId)
  for (const stepId of stepsWaitedAt(instance)) {
    const target = mapped(stepId)
    const via = target === stepId ? '' : ` (mapped to "${target}")`
    const before = Object.hasOwn(from, stepId) ? from[stepId] : undefined
    const after = Object.hasOwn(to, target) ? to[target] : undefined
    if (!after) return { reason: `step "${stepId}"${via} does not exist in version ${toVersion}` }
    if (before && before.type !== after.type)
      return { reason: `step "${stepId}"${via} is a ${before.type} step, in version ${toVersion} a ${after.type} step` }
  }
  return {
    instance: {
      ...instance,
      modelVersion: toVersion,
      tasks: instance.tasks.map((task) => (task.status === 'open' ? { ...task, stepId: mapped(task.stepId) } : task)),
      threads: instance.threads.map((thread) =>
        thread.status === 'done'
          ? thread
          : { ...thread, stepId: mapped(thread.stepId), ...(thread.join === undefined ? {} : { join: mapped(thread.join) }) },
      ),
    },
  }
}
