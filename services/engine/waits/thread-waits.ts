/**
 * What the threads of an instance wait for, as a commit sees it before and after a change: the
 * waits a change starts are stored with it (a timer's job, a message subscription), the waits it
 * ends are removed with it, whatever ended them (the event itself, a cancel, a step change, the
 * end of the process). A thread waits only while it is `waiting` in an instance that has not ended.
 */
import type { ProcessState, Thread } from '../../../runtime/types.js'
import { Collections, type StoredBatchJob } from '../../../store/collections.js'
import type { AtomicWrite } from '../../../store/port.js'

export type WaitingThread<Wait extends 'timer' | 'message' | 'child'> = Thread & Required<Pick<Thread, Wait>>

/** The waiting threads of `state` with a `wait`, by the id that wait's own key gives. */
export function waitsOf<Wait extends 'timer' | 'message' | 'child'>(
  state: ProcessState | undefined,
  wait: Wait,
  keyOf: (thread: WaitingThread<Wait>) => string,
): Map<string, WaitingThread<Wait>> {
  const waits = new Map<string, WaitingThread<Wait>>()
  const status = state?.processInstance.processStatus
  if (!state || status === 'completed' || status === 'cancelled') return waits
  for (const thread of state.processInstance.threads) {
    if (thread.status !== 'waiting' || thread[wait] === undefined) continue
    const waiting = thread as WaitingThread<Wait>
    waits.set(keyOf(waiting), waiting)
  }
  return waits
}

/** The waits `after` has and `before` had not (started), and those `before` had and `after` has not (ended). */
export function changedWaits<Wait extends 'timer' | 'message' | 'child'>(
  before: ProcessState | undefined,
  after: ProcessState,
  wait: Wait,
  keyOf: (thread: WaitingThread<Wait>) => string,
): { started: Array<WaitingThread<Wait>>; ended: Array<WaitingThread<Wait>> } {
  const previous = waitsOf(before, wait, keyOf)
  const next = waitsOf(after, wait, keyOf)
  return {
    started: [...next].filter(([key]) => !previous.has(key)).map(([, thread]) => thread),
    ended: [...previous].filter(([key]) => !next.has(key)).map(([, thread]) => thread),
  }
}

/** The change resumes a suspended instance: what waited while it was suspended may run now. */
function resumes(before: ProcessState | undefined, after: ProcessState): boolean {
  return before?.processInstance.processStatus === 'suspended' && after.processInstance.processStatus !== 'suspended'
}

/**
 * When the change resumes a suspended instance, the write that makes its `kind` jobs due now: a job
 * that came due while the instance was suspended was deferred to a later check
 * (services/engine/waits/move-thread.ts), and resuming should not wait for that check.
 */
export function jobsDueOnResume(
  before: ProcessState | undefined,
  after: ProcessState,
  kind: StoredBatchJob['kind'],
  now: Date,
): AtomicWrite[] {
  if (!resumes(before, after)) return []
  return [
    {
      collection: Collections.batchJobs,
      kind: 'updateMany',
      filter: { status: 'waiting', kind, 'payload.processInstanceId': after.processInstance.processInstanceId },
      update: { $set: { dueAt: now, updatedAt: now } },
    },
  ]
}
