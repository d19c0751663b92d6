/**
 * The webhook delivery worker of one engine, run with its batch worker (same poll interval, lease
 * and concurrency settings, the same retry rule: WEBHOOK_BACKOFF_MS × 2^(tries−1), `failed` at the
 * tenth failed try). Each pass claims the due deliveries whose earlier events (same instance, same
 * subscription) are all settled, so a receiver gets an instance's events in order, and tries them
 * `concurrency` at a time; passes follow one another while they find work.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { StoredWebhookDelivery, StoredWebhookSubscription } from '../../../../store/collections.js'
import { PollLoop } from '../../jobs/poll-loop.js'
import { MAX_TRIES } from '../../jobs/batch/repository.js'
import { backoffDelay } from '../../jobs/batch/worker.js'
import type { DeliveryRepository, TryOutcome } from './repository.js'
import type { TryResult, WebhookSender } from './sender.js'

export interface DeliveryWorkerSettings {
  /** WEBHOOK_BACKOFF_MS: the wait after the first failed try; each further one doubles it. */
  backoffMs: number
  /** WEBHOOK_TIMEOUT_MS: a claim lasts at least twice as long, so a slow receiver never loses it. */
  timeoutMs: number
  pollMs: number
  leaseMs: number
  /** Tries one engine has under way at the same time. */
  concurrency: number
  /** Settled deliveries older than this are removed (BATCH_RETENTION_HOURS, like finished batch jobs). */
  retentionMs: number
}

export interface SubscriptionLookup {
  find(subscriptionId: string): Promise<StoredWebhookSubscription | null>
}

export interface DeliveryWorkerOptions {
  deliveries: DeliveryRepository
  subscriptions: SubscriptionLookup
  sender: Pick<WebhookSender, 'send'>
  settings: DeliveryWorkerSettings
  /** Names this engine in `leaseOwner`. */
  owner: string
  log: FastifyBaseLogger
  now: () => Date
}

/** Due deliveries one pass looks at. */
const CANDIDATES_PER_PASS = 200
const STOP_GRACE_MS = 5_000
/** How often settled deliveries past the retention window are looked for. */
const RETENTION_SWEEP_MS = 60_000

/** Where a try leaves its delivery (`tries` is the count before it). */
export function outcomeOf(result: TryResult, tries: number, now: Date, backoffMs: number): TryOutcome {
  if (result.delivered) return { status: 'delivered', statusCode: result.statusCode }
  const made = tries + 1
  if (made >= MAX_TRIES) return { status: 'failed', statusCode: result.statusCode, error: result.error }
  return {
    status: 'pending',
    dueAt: new Date(now.getTime() + backoffDelay(made, backoffMs)),
    statusCode: result.statusCode,
    error: result.error,
  }
}

export class DeliveryWorker {
  private readonly loop: PollLoop
  private stopping = false
  /** Set by wake(): a change stored deliveries while a pass ran, so another pass follows. */
  private woken = false
  private lastSweep = 0

  constructor(private readonly options: DeliveryWorkerOptions) {
    this.loop = new PollLoop(
      options.settings.pollMs,
      () => this.pollOnce(),
      (error) => options.log.error({ err: error }, 'webhook delivery poll failed'),
    )
  }

  start(): void {
    this.stopping = false
    this.loop.start()
  }

  /** Looks for due deliveries now (a change just stored some) instead of at the next poll. */
  wake(): void {
    this.woken = true
    this.loop.wake()
  }

  async stop(): Promise<void> {
    this.stopping = true
    await this.loop.stop(STOP_GRACE_MS)
  }

  /** Removes the settled deliveries past the retention window; resolves with how many. */
  async removeExpired(): Promise<number> {
    return this.options.deliveries.removeSettledBefore(new Date(this.options.now().getTime() - this.options.settings.retentionMs))
  }

  private async pollOnce(): Promise<void> {
    await this.runDue()
    const now = this.options.now().getTime()
    if (now - this.lastSweep < RETENTION_SWEEP_MS) return
    this.lastSweep = now
    const removed = await this.removeExpired()
    if (removed > 0) this.options.log.info({ removed }, 'removed settled webhook deliveries past the retention window')
  }

  /** Runs passes until one finds nothing to try; resolves with how many tries were made. */
  async runDue(): Promise<number> {
    let total = 0
    while (!this.stopping) {
      this.woken = false
      const tried = await this.pass()
      total += tried
      if (tried === 0 && !this.woken) break
    }
    return total
  }

  private async pass(): Promise<number> {
    const { deliveries, settings, owner, log } = this.options
    const now = this.options.now()
    const released = await deliveries.releaseLapsed(now)
    if (released > 0) log.warn({ released }, 'webhook deliveries whose engine stopped mid-try are due again')
    const leaseUntil = new Date(now.getTime() + Math.max(settings.leaseMs, 2 * settings.timeoutMs))
    const running = new Set<Promise<void>>()
    // One lookup per subscription and pass, however many of its deliveries the pass tries.
    const subscriptions = new Map<string, Promise<StoredWebhookSubscription | null>>()
    const subscriptionOf = (id: string): Promise<StoredWebhookSubscription | null> => {
      let found = subscriptions.get(id)
      if (!found) subscriptions.set(id, (found = this.options.subscriptions.find(id)))
      return found
    }
    let tried = 0
    for (const candidate of await deliveries.due(now, CANDIDATES_PER_PASS)) {
      if (this.stopping) break
      if (await deliveries.hasEarlierOpen(candidate)) continue
      const claimed = await deliveries.claim(candidate, owner, now, leaseUntil)
      if (!claimed) continue
      tried++
      const attempt: Promise<void> = this.attempt(claimed, subscriptionOf).finally(() => running.delete(attempt))
      running.add(attempt)
      if (running.size >= settings.concurrency) await Promise.race(running)
    }
    await Promise.all(running)
    return tried
  }

  /** One try and its outcome; a failure to record it leaves the claim to lapse and the try to be made again. */
  private async attempt(
    delivery: StoredWebhookDelivery,
    subscriptionOf: (id: string) => Promise<StoredWebhookSubscription | null>,
  ): Promise<void> {
    const { deliveries, sender, settings, owner, log } = this.options
    const deliveryLog = log.child({
      deliveryId: delivery._id,
      subscriptionId: delivery.subscriptionId,
      eventType: delivery.eventType,
      tries: delivery.tries,
    })
    try {
      const subscription = await subscriptionOf(delivery.subscriptionId)
      const result: TryResult = subscription
        ? await sender.send(subscription, delivery, this.options.now())
        : { delivered: false, error: 'the subscription was deleted' }
      const outcome: TryOutcome = subscription
        ? outcomeOf(result, delivery.tries, this.options.now(), settings.backoffMs)
        : { status: 'failed', error: 'the subscription was deleted' }
      if (!(await deliveries.record(delivery, owner, outcome, this.options.now())))
        deliveryLog.warn('a webhook delivery was taken over or deleted before its outcome was recorded')
      else if (outcome.status === 'failed') deliveryLog.error(`webhook delivery failed for good: ${outcome.error}`)
      else if (outcome.status === 'pending')
        deliveryLog.warn({ dueAt: outcome.dueAt }, `webhook delivery failed, will retry: ${outcome.error}`)
    } catch (error) {
      deliveryLog.error({ err: error }, 'could not record the outcome of a webhook delivery; it is tried again once its claim lapses')
    }
  }
}
