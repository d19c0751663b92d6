/**
 * The open-task counts behind `workflow_tasks_open`. The gauge is kept up to date from the effects of
 * every change this engine stores (workflow-events.ts); this reads the store's counts once at start
 * and then every few minutes, to take in what other engines and deletions changed — never per scrape.
 */
import type { OpenTaskCount } from '../../../lib/telemetry/engine-metrics.js'
import type { Store } from '../../../store/port.js'
import { Collections, ENDED_STATUSES } from '../../../store/collections.js'

/** How often the counts are read again from the store. */
export const OPEN_TASK_RESYNC_MS = 5 * 60_000

export async function countOpenTasks(store: Store): Promise<OpenTaskCount[]> {
  const groups = await store
    .collection(Collections.contexts)
    .aggregate<{ _id: { processId: unknown; stepId: unknown }; count: number }>([
      // Open tasks are only found in instances that did not end: running, failed and suspended ones
      // (a suspended instance's tasks wait for it to be resumed, and the gauge counts them meanwhile).
      { $match: { processStatus: { $nin: ENDED_STATUSES }, 'processInstance.tasks.status': 'open' } },
      { $unwind: '$processInstance.tasks' },
      { $match: { 'processInstance.tasks.status': 'open' } },
      { $group: { _id: { processId: '$processId', stepId: '$processInstance.tasks.stepId' }, count: { $sum: 1 } } },
    ])
    .toArray()
  return groups.flatMap(({ _id, count }) =>
    typeof _id.processId === 'string' && typeof _id.stepId === 'string' ? [{ processId: _id.processId, stepId: _id.stepId, count }] : [],
  )
}
