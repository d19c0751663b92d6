/**
 * The batch worker of one engine: claims due jobs (one atomic `findOneAndUpdate` each, with a
 * lease), runs their handler, records the outcome, and now and then removes finished jobs past the
 * retention window. The lease is renewed while a handler runs, so only a stopped engine's jobs
 * lapse and run again elsewhere. Timers are unref'd and `stop()` leaves none behind.
 */
import type { FastifyBaseLogger } from 'fastify'
import { PollLoop } from '../poll-loop.js'
import {
  type BatchJobHandlers,
  type BatchJobKind,
  type ClaimedBatchJob,
  errorMessage,
  isPermanentFailure,
  JobDeferral,
} from './handlers.js'
import { type BatchJobRepository, type FailureOutcome, MAX_TRIES } from './repository.js'

export interface BatchWorkerSettings {
  /** First retry delay; try n waits backoffMs × 2^(n-1) (docs/reference/jobs.md#the-batch-worker). */
  backoffMs: number
  pollMs: number
  leaseMs: number
  /** Finished jobs older than this are removed. */
  retentionMs: number
  /** Jobs one engine runs at the same time. */
  concurrency: number
}

export interface BatchWorkerOptions {
  repository: BatchJobRepository
  handlers: BatchJobHandlers
  settings: BatchWorkerSettings
  /** Names this worker in `leaseOwner`; unique per engine instance. */
  owner: string
  log: FastifyBaseLogger
  now?: () => Date
}

/** How often finished jobs past the retention window are looked for. */
const RETENTION_SWEEP_MS = 60_000
/** How long `stop()` waits for running handlers (the shutdown itself is forced after 10 s). */
const STOP_GRACE_MS = 5_000

/** The delay before try `tryCount` + 1, after `tryCount` failed tries. */
export function backoffDelay(tryCount: number, backoffMs: number): number {
  return backoffMs * 2 ** (tryCount - 1)
}

/** Where a job that failed now goes: `failed` on its tenth failure or a permanent one, else due after the backoff. */
export function failureOutcome(job: Pick<ClaimedBatchJob, 'tryCount'>, permanent: boolean, now: Date, backoffMs: number): FailureOutcome {
  const tries = job.tryCount + 1
  if (permanent || tries >= MAX_TRIES) return { status: 'failed' }
  return { status: 'retrying', dueAt: new Date(now.getTime() + backoffDelay(tries, backoffMs)) }
}

export class BatchWorker {
  private readonly now: () => Date
  private readonly loop: PollLoop
  private stopping = false
  private lastSweep = 0

  constructor(private readonly options: BatchWorkerOptions) {
    this.now = options.now ?? (() => new Date())
    this.loop = new PollLoop(
      options.settings.pollMs,
      () => this.pollOnce(),
      (error) => options.log.error({ err: error }, 'batch worker poll failed'),
    )
  }

  get owner(): string {
    return this.options.owner
  }

  /** Polls every `pollMs` until stopped. */
  start(): void {
    this.stopping = false
    this.loop.start()
  }

  /** Looks for due jobs now instead of at the next poll (e.g. after a schedule fired a job). */
  wake(): void {
    this.loop.wake()
  }

  /** Stops claiming and waits (a bounded time) for the running handlers; their leases lapse if they outlive it. */
  async stop(): Promise<void> {
    this.stopping = true
    await this.loop.stop(STOP_GRACE_MS)
  }

  /**
   * Claims and runs jobs until none is due, `concurrency` at a time; resolves with how many ran.
   * The poll loop calls it; tests call it directly with a fake clock.
   */
  async runDue(): Promise<number> {
    const kinds = [...this.options.handlers.keys()]
    if (kinds.length === 0) return 0
    let ran = 0
    const lane = async (): Promise<void> => {
      while (!this.stopping) {
        const job = await this.claimNext(kinds)
        if (!job) return
        ran++
        await this.execute(job)
      }
    }
    await Promise.all(Array.from({ length: this.options.settings.concurrency }, lane))
    return ran
  }

  /** Removes the finished jobs past the retention window; resolves with how many. */
  async removeExpired(): Promise<number> {
    const before = new Date(this.now().getTime() - this.options.settings.retentionMs)
    return this.options.repository.removeFinishedBefore(before)
  }

  /** A store failure is logged by the loop; nothing was claimed, or the claim's lease lapses. */
  private async pollOnce(): Promise<void> {
    await this.runDue()
    const now = this.now().getTime()
    if (now - this.lastSweep >= RETENTION_SWEEP_MS) {
      this.lastSweep = now
      const removed = await this.removeExpired()
      if (removed > 0) this.options.log.info({ removed }, 'removed finished batch jobs past the retention window')
    }
  }

  private async claimNext(kinds: readonly BatchJobKind[]): Promise<ClaimedBatchJob | null> {
    const { repository, owner, settings } = this.options
    const due = await repository.claimDue(kinds, owner, this.now(), settings.leaseMs)
    if (due) return due
    while (!this.stopping) {
      const lapsed = await repository.claimLapsed(kinds, owner, this.now(), settings.leaseMs)
      if (!lapsed) return null
      if (lapsed.tryCount < MAX_TRIES) return lapsed
      await repository.failClaimed(lapsed, owner, this.now())
      this.options.log.warn(
        { jobId: lapsed.jobId, kind: lapsed.kind, tryCount: lapsed.tryCount },
        'batch job failed: its last try ended with a lapsed lease',
      )
    }
    return null
  }

  private async execute(job: ClaimedBatchJob): Promise<void> {
    const { repository, owner, settings, log } = this.options
    const handler = this.options.handlers.get(job.kind)
    const jobLog = log.child({ jobId: job.jobId, kind: job.kind, appId: job.appId, tryCount: job.tryCount })
    const renewal = setInterval(
      () => {
        repository.renewLease(job, owner, new Date(this.now().getTime() + settings.leaseMs)).then(
          (held) => held || jobLog.warn('lost the lease of a running batch job; another engine may run it again'),
          (error: unknown) => jobLog.warn({ err: error }, 'could not renew the lease of a running batch job'),
        )
      },
      Math.max(1, Math.floor(settings.leaseMs / 3)),
    )
    renewal.unref()
    let failure: { error: unknown } | undefined
    try {
      if (!handler) throw new Error(`no handler for batch jobs of kind ${job.kind}`)
      await handler(job, { now: this.now(), log: jobLog })
    } catch (error) {
      failure = { error }
    } finally {
      clearInterval(renewal)
    }
    try {
      if (!failure) {
        if (await repository.complete(job, owner, this.now())) jobLog.debug('batch job done')
        else jobLog.warn('batch job finished after its lease was taken over')
        return
      }
      if (failure.error instanceof JobDeferral) {
        const { until, message } = failure.error
        if (await repository.defer(job, owner, until, this.now())) jobLog.debug({ until }, `batch job deferred: ${message}`)
        else jobLog.warn('batch job deferred after its lease was taken over')
        return
      }
      const outcome = failureOutcome(job, isPermanentFailure(failure.error), this.now(), settings.backoffMs)
      const message = errorMessage(failure.error)
      if (!(await repository.recordFailure(job, owner, outcome, message, this.now())))
        jobLog.warn({ err: failure.error }, 'batch job failed after its lease was taken over')
      else if (outcome.status === 'failed') jobLog.error({ err: failure.error }, `batch job failed for good: ${message}`)
      else jobLog.warn({ err: failure.error, dueAt: outcome.dueAt }, `batch job failed, will retry: ${message}`)
    } catch (storeError) {
      jobLog.error({ err: storeError }, 'could not record the outcome of a batch job; its lease will lapse and it runs again')
    }
  }
}
