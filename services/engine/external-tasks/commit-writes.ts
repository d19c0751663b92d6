/**
 * What a stored change of an instance writes to its external tasks, in the change's atomic batch
 * (services/engine/instances/commit-hooks.ts): the tasks its threads now wait for are inserted, the
 * ones no thread waits for any more (completed, failed for good, cancelled with the instance, moved
 * by a step change) are removed, and a suspension or a resumption holds or frees the rest. A lost
 * compare-and-set stores none of it.
 */
import { Collections, type StoredExternalTask } from '../../../store/collections.js'
import type { AtomicWrite } from '../../../store/port.js'
import type { ProcessState } from '../../../runtime/types.js'
import type { ChangeToStore } from '../instances/commit-hooks.js'

/** The external tasks the threads of a state wait for. */
export function awaitedExternalTasks(state: ProcessState | undefined): Set<string> {
  const awaited = new Set<string>()
  for (const thread of state?.processInstance.threads ?? []) {
    if (thread.status === 'waiting' && thread.externalTaskId !== undefined) awaited.add(thread.externalTaskId)
  }
  return awaited
}

/** The documents of the external tasks the change creates. */
export function createdExternalTasks(change: Pick<ChangeToStore, 'state' | 'previous' | 'effects' | 'compiled' | 'version' | 'now'>) {
  const instance = change.state.processInstance
  const documents: StoredExternalTask[] = []
  for (const effect of change.effects) {
    if (effect.kind !== 'externalTaskCreated') continue
    const { externalTaskId, threadId, stepId, topic, input, retries } = effect.externalTask
    const step = change.compiled.step(stepId)
    const rollback = step?.type === 'externalTask' && step.onError === 'rollback' && change.previous !== undefined
    documents.push({
      _id: externalTaskId,
      organizationId: instance.organizationId,
      appId: instance.appId,
      processInstanceId: instance.processInstanceId,
      processId: instance.processId,
      businessKey: instance.businessKey,
      threadId,
      stepId,
      topic,
      input,
      retries,
      createdAt: change.now,
      availableAt: change.now,
      suspended: false,
      instanceVersion: change.version,
      ...(rollback ? { rollbackState: change.previous } : {}),
    })
  }
  return documents
}

export function externalTaskWrites(change: ChangeToStore): AtomicWrite[] {
  const writes: AtomicWrite[] = []
  const created = createdExternalTasks(change)
  const awaitedNow = awaitedExternalTasks(change.state)
  // A task created and left within one change (a retry that fails at once) is never stored.
  for (const doc of created)
    if (awaitedNow.has(doc._id)) writes.push({ collection: Collections.externalTasks, kind: 'insertOne', doc: { ...doc } })
  const gone = [...awaitedExternalTasks(change.previous)].filter((externalTaskId) => !awaitedNow.has(externalTaskId))
  if (gone.length > 0) writes.push({ collection: Collections.externalTasks, kind: 'deleteMany', filter: { _id: { $in: gone } } })
  const wasSuspended = change.previous?.processInstance.processStatus === 'suspended'
  const isSuspended = change.state.processInstance.processStatus === 'suspended'
  if (change.previous && wasSuspended !== isSuspended && awaitedNow.size > 0) {
    writes.push({
      collection: Collections.externalTasks,
      kind: 'updateMany',
      filter: { processInstanceId: change.state.processInstance.processInstanceId },
      update: { $set: { suspended: isSuspended } },
    })
  }
  return writes
}
