/**
 * Message subscriptions (docs/models.md#receive): a thread that starts waiting at a receive step
 * gets its subscription (tenant, message name, the correlation key computed when it arrived) in the
 * same atomic commit, and the change that ends the wait removes it, so a correlate finds exactly the
 * threads that wait. When a message kept with a `ttl` is waiting for the new thread, the commit also
 * queues a `bufferedMessage` job that delivers it (buffered-delivery.ts).
 */
import type { AtomicWrite } from '../../../../store/port.js'
import { Collections, type StoredMessageSubscription } from '../../../../store/collections.js'
import type { ChangeToStore } from '../../instances/commit-hooks.js'
import { newBatchJob } from '../../jobs/batch/repository.js'
import { changedWaits } from '../thread-waits.js'
import type { MessageRepository } from './repository.js'

export interface BufferedMessagePayload {
  processInstanceId: string
  threadId: string
  subscriptionId: string
  messageId: string
}

export async function subscriptionWrites(
  messages: MessageRepository,
  { previous, state, now }: Pick<ChangeToStore, 'previous' | 'state' | 'now'>,
): Promise<AtomicWrite[]> {
  const instance = state.processInstance
  const { started, ended } = changedWaits(previous, state, 'message', (thread) => thread.message.subscriptionId)
  const writes: AtomicWrite[] = []
  for (const thread of started) {
    const subscription: StoredMessageSubscription = {
      _id: thread.message.subscriptionId,
      organizationId: instance.organizationId,
      appId: instance.appId,
      messageName: thread.message.messageName,
      correlationKey: thread.message.correlationKey,
      processId: instance.processId,
      processInstanceId: instance.processInstanceId,
      threadId: thread.threadId,
      stepId: thread.stepId,
      createdAt: now,
    }
    writes.push({ collection: Collections.messageSubscriptions, kind: 'insertOne', doc: { ...subscription } })
    const buffered = await messages.bufferedFor(subscription, now)
    if (!buffered) continue
    const payload: BufferedMessagePayload = {
      processInstanceId: instance.processInstanceId,
      threadId: thread.threadId,
      subscriptionId: subscription._id,
      messageId: buffered._id,
    }
    const job = newBatchJob(
      { kind: 'bufferedMessage', appId: instance.appId, organizationId: instance.organizationId, payload: { ...payload }, dueAt: now },
      now,
    )
    writes.push({ collection: Collections.batchJobs, kind: 'insertOne', doc: { ...job } })
  }
  if (ended.length > 0) {
    const ids = ended.map((thread) => thread.message.subscriptionId)
    writes.push({ collection: Collections.messageSubscriptions, kind: 'deleteMany', filter: { _id: { $in: ids } } })
  }
  return writes
}
