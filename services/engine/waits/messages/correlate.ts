/**
 * Delivering messages (docs/models.md#receive, `POST /message/correlate`): the one thread of the
 * caller's tenant whose subscription matches takes the message in a compare-and-set commit of its
 * instance, which also removes the subscription; of two concurrent deliveries one commits and the
 * other, finding the instance changed, looks again and finds no thread waiting. With no thread
 * waiting, a message with a `ttl` is kept for the first thread that arrives for it (its commit
 * queues a `bufferedMessage` job, run here too).
 */
import { randomUUID } from 'node:crypto'
import type { EngineErrorCode } from '../../../../openapi/generated/errors.js'
import type { MessageCorrelateRequest, MessageCorrelateResult } from '../../../../openapi/generated/schemas.js'
import { type ErrorFactory, isServiceError } from '../../../../plugins/errors/service-error.js'
import type { Actor } from '../../../../plugins/identity/actor.js'
import { addDuration, parseIsoDuration } from '../../../../model/duration.js'
import { Collections, type StoredMessageSubscription } from '../../../../store/collections.js'
import type { Authorization } from '../../instances/authorization.js'
import { sameTenant } from '../../instances/authorization.js'
import { runtimeUserOf } from '../../flow-host/environment.js'
import { type BatchJobHandler, PermanentJobError } from '../../jobs/batch/handlers.js'
import { commitThreadMove, type MoveThreadDependencies, moveThreadForJob, type ThreadMove, threadWaitingFor } from '../move-thread.js'
import type { BatchJobRepository } from '../../jobs/batch/repository.js'
import type { MessageAddress, MessageRepository } from './repository.js'
import type { BufferedMessagePayload } from './subscriptions.js'

/** The longest a message may be kept for a thread that has not arrived. */
export const MAX_MESSAGE_TTL_MS = 30 * 86_400_000

/** How often a delivery that lost its compare-and-set to another change looks again. */
const ATTEMPTS = 5

export interface CorrelateDependencies extends MoveThreadDependencies {
  messages: MessageRepository
  batchJobs: Pick<BatchJobRepository, 'enqueue'>
  authorization: Authorization
  now: () => Date
}

export type CorrelationOutcome = 'delivered' | 'buffered' | 'noThread' | 'ambiguous'

/** The move of a receive step's thread for its subscription, with the message's variables. */
function deliveryMove(subscriptionId: string, variables: Record<string, unknown>, details: Record<string, unknown>): ThreadMove {
  return {
    waitsFor: (thread) => thread.message?.subscriptionId === subscriptionId,
    move: (compiled, state, env) => {
      const threadId = state.processInstance.threads.find((thread) => thread.message?.subscriptionId === subscriptionId)?.threadId ?? ''
      return compiled.deliverMessage(state, threadId, subscriptionId, variables, env)
    },
    activity: (thread) => ({
      type: 'messageReceived',
      stepId: thread.stepId,
      details: {
        threadId: thread.threadId,
        messageName: thread.message?.messageName,
        correlationKey: thread.message?.correlationKey,
        ...details,
      },
    }),
  }
}

export class MessageCorrelation {
  constructor(
    private readonly deps: CorrelateDependencies,
    private readonly observe: (outcome: CorrelationOutcome) => void = () => undefined,
  ) {}

  private get fail(): ErrorFactory<EngineErrorCode> {
    return this.deps.fail
  }

  async correlate(actor: Actor, request: MessageCorrelateRequest, additionalHeaders?: string | string[]): Promise<MessageCorrelateResult> {
    this.deps.authorization.assertMayActForOthers(actor, 'correlate messages')
    const { messageName, correlationKey } = request
    const ttlMs = request.ttl === undefined ? undefined : this.ttlOf(request.ttl)
    // The client library injects the tenant: another app is another tenant, where nothing waits for this caller.
    const foreign =
      (request.appId !== undefined && request.appId !== actor.appId) ||
      (request.organizationId !== undefined && request.organizationId !== actor.organizationId)
    const address: MessageAddress = { organizationId: actor.organizationId, appId: actor.appId, messageName, correlationKey }
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      const waiting = foreign ? [] : await this.deps.messages.waiting(address, request.processId, 2)
      if (waiting.length > 1) {
        this.observe('ambiguous')
        throw this.fail('wm3201', { args: [messageName, correlationKey], parameters: { field: 'body.correlationKey' } })
      }
      const subscription = waiting[0]
      if (!subscription) return this.noThread(address, request, ttlMs, foreign)
      const delivered = await this.deliver(actor, subscription, request.variables ?? {}, additionalHeaders)
      if (delivered) {
        this.observe('delivered')
        return delivered
      }
    }
    throw this.fail('wm3042', { args: [`waiting for message ${messageName}`], parameters: { field: 'body.correlationKey' } })
  }

  /** The delivery to one subscription's thread; null when it stopped waiting or its instance changed meanwhile (look again). */
  private async deliver(
    actor: Actor,
    subscription: StoredMessageSubscription,
    variables: Record<string, unknown>,
    additionalHeaders: string | string[] | undefined,
  ): Promise<MessageCorrelateResult | null> {
    const stored = await this.deps.instances.find(subscription.processInstanceId)
    const move = deliveryMove(subscription._id, variables, {})
    const thread = threadWaitingFor(stored, subscription.threadId, move)
    if (!stored || !thread || !sameTenant(actor, stored)) return null
    const env = await this.deps.environments.create({
      actor: runtimeUserOf(actor),
      appId: stored.appId,
      organizationId: stored.organizationId,
      additionalHeaders,
    })
    try {
      await commitThreadMove(this.deps, stored, thread, move, env, actor)
    } catch (error) {
      if (isServiceError(error) && error.code === 'wm3042') return null
      throw error
    }
    return {
      delivered: true,
      processInstanceId: stored._id,
      processId: stored.processId,
      businessKey: stored.businessKey,
      threadId: thread.threadId,
      stepId: thread.stepId,
    }
  }

  private async noThread(
    address: MessageAddress,
    request: MessageCorrelateRequest,
    ttlMs: number | undefined,
    foreign: boolean,
  ): Promise<MessageCorrelateResult> {
    if (ttlMs === undefined || foreign) {
      this.observe('noThread')
      throw this.fail('wm3200', { args: [request.messageName, request.correlationKey], parameters: { field: 'body.correlationKey' } })
    }
    const now = this.deps.now()
    const expiresAt = new Date(now.getTime() + ttlMs)
    const messageId = randomUUID()
    await this.deps.messages.buffer({
      _id: messageId,
      ...address,
      ...(request.processId === undefined ? {} : { processId: request.processId }),
      variables: request.variables ?? {},
      createdAt: now,
      expiresAt,
    })
    this.observe('buffered')
    // A thread that arrived while the message was being kept looked for it too early: it is handed
    // the message now (the job checks both again and takes the message once).
    const [arrived, another] = await this.deps.messages.waiting(address, request.processId, 2)
    if (arrived && !another) {
      const payload: BufferedMessagePayload = {
        processInstanceId: arrived.processInstanceId,
        threadId: arrived.threadId,
        subscriptionId: arrived._id,
        messageId,
      }
      const tenant = { appId: address.appId, organizationId: address.organizationId }
      await this.deps.batchJobs.enqueue({ kind: 'bufferedMessage', ...tenant, payload: { ...payload }, dueAt: now }, now)
    }
    return { delivered: false, bufferedUntil: expiresAt.toISOString() }
  }

  /** The ttl in milliseconds: an ISO-8601 duration up to MAX_MESSAGE_TTL_MS (400 wm3202 otherwise). */
  private ttlOf(ttl: string): number {
    const duration = parseIsoDuration(ttl)
    const now = this.deps.now()
    const ms = duration ? addDuration(now, duration).getTime() - now.getTime() : Number.NaN
    if (!(ms > 0) || ms > MAX_MESSAGE_TTL_MS) {
      throw this.fail('wm3202', { args: [`${ttl} (an ISO-8601 duration of at most P30D)`], parameters: { field: 'body.ttl' } })
    }
    return ms
  }

  /** Runs a bufferedMessage job: the kept message goes to the thread that arrived for it, marked as taken in the same commit. */
  bufferedHandler(): BatchJobHandler {
    return async (job, context) => {
      const { processInstanceId, threadId, subscriptionId, messageId } = job.payload as Partial<BufferedMessagePayload>
      if (
        typeof processInstanceId !== 'string' ||
        typeof threadId !== 'string' ||
        typeof subscriptionId !== 'string' ||
        typeof messageId !== 'string'
      ) {
        throw new PermanentJobError(
          `a bufferedMessage job needs processInstanceId, threadId, subscriptionId, messageId: ${JSON.stringify(job.payload)}`,
        )
      }
      const message = await this.deps.messages.findBuffered(messageId)
      if (!message || message.consumedBy !== undefined || message.expiresAt.getTime() <= context.now.getTime()) {
        context.log.debug('the buffered message was taken or expired')
        return
      }
      const move: ThreadMove = {
        ...deliveryMove(subscriptionId, message.variables, { buffered: true, bufferedAt: message.createdAt.toISOString() }),
        alongside: [
          {
            collection: Collections.bufferedMessages,
            kind: 'updateOne',
            filter: { _id: messageId, consumedBy: { $exists: false } },
            update: { $set: { consumedBy: subscriptionId } },
            mustMatch: true,
          },
        ],
      }
      const outcome = await moveThreadForJob(this.deps, processInstanceId, threadId, context.now, move)
      if (outcome === 'moved') this.observe('delivered')
    }
  }
}
