/**
 * Support for the streams crash tests: what must hold of every stored process instance after a
 * crash, read from the store itself — the instance, its activity log and its notification record
 * were written together, so they agree.
 */
import { isDeepStrictEqual } from 'node:util'
import type { Store } from '../../store/port.js'
import { Collections, type StoredContext } from '../../store/collections.js'
import { notificationRecordOf, storedActivities } from '../../services/testing/instance-store.js'

/** The leave request's first task (the employee's form); completing it opens the manager's approval. */
export const REQUEST_STEP = 'request'

/** Whether the instance's request task was completed (an approval task exists, or the process moved on). */
export function requestCompleted(context: StoredContext): boolean {
  return !context.processInstance.tasks.some((task) => task.stepId === REQUEST_STEP && task.status === 'open')
}

/** Every disagreement between the stored instance, its activities and its notification, as readable lines. */
export async function inconsistencies(store: Store, processInstanceId: string): Promise<string[]> {
  const problems: string[] = []
  const context = await store.collection<StoredContext>(Collections.contexts).findOne({ _id: processInstanceId })
  if (!context) return [`${processInstanceId}: no instance`]
  const activities = await storedActivities(store, processInstanceId)
  const notification = await notificationRecordOf(store, processInstanceId)
  if (!activities.some((activity) => activity.type === 'start')) problems.push(`${processInstanceId}: no start activity`)
  if (!notification) problems.push(`${processInstanceId}: no notification`)
  else if (!isDeepStrictEqual(notification.processInstance, context.processInstance))
    problems.push(`${processInstanceId}: the notification holds another state of the instance`)
  const completions = activities.filter((activity) => activity.type === 'complete')
  const open = new Set(context.processInstance.tasks.filter((task) => task.status === 'open').map((task) => task.taskId))
  for (const completion of completions) {
    if (completion.taskId !== undefined && open.has(completion.taskId))
      problems.push(`${processInstanceId}: task ${completion.taskId} is logged complete but still open`)
  }
  if (requestCompleted(context) && completions.length === 0)
    problems.push(`${processInstanceId}: the request task is done but no completion is logged`)
  return problems
}
