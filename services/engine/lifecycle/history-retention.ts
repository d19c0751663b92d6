/**
 * HISTORY_RETENTION_DAYS (docs/reference/lifecycle.md#purging-ended-instances): ended instances
 * whose last change is older than that are removed in the background. Every engine looks once per
 * batch poll whether the hour has turned and then queues a `historyRetention` job for it, under
 * the unique schedule key `historyRetention:<hour>`, so that the engines queue one between them;
 * the batch worker of one engine runs it, removing a small batch at a time and keeping its progress
 * (and its lease) after each. Unset, nothing is queued and instances are kept forever.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { BulkProgress } from '../../../store/collections.js'
import type { BatchJobHandler } from '../jobs/batch/handlers.js'
import type { BatchJobRepository } from '../jobs/batch/repository.js'
import type { BatchWorker } from '../jobs/batch/worker.js'
import { PollLoop } from '../jobs/poll-loop.js'
import { endedFilter, type InstancePurge } from './purge.js'

/**
 * Instances removed between two progress records. Each is its own atomic write, so other writes go
 * between them; the batch is not smaller because finding one reads every candidate of the index.
 */
export const RETENTION_BATCH = 500

const HOUR_MS = 3_600_000
const DAY_MS = 24 * HOUR_MS

export interface HistoryRetentionOptions {
  /** HISTORY_RETENTION_DAYS; undefined keeps every instance. */
  days: number | undefined
  /** How often the engine looks whether the hour has turned (BATCH_POLL_MS). */
  pollMs: number
}

interface RetentionDependencies {
  purge: InstancePurge
  batchJobs: BatchJobRepository
  worker: Pick<BatchWorker, 'owner' | 'wake'>
  now: () => Date
}

export class HistoryRetention {
  private queuedHour: number | undefined

  constructor(
    private readonly deps: RetentionDependencies,
    private readonly days: number,
  ) {}

  /** Queues this hour's job unless this engine did already (another engine may have: then nothing). */
  async queueThisHour(): Promise<void> {
    const now = this.deps.now()
    const hour = Math.floor(now.getTime() / HOUR_MS)
    if (hour === this.queuedHour) return
    const endedBefore = new Date(now.getTime() - this.days * DAY_MS).toISOString()
    const scheduleKey = `historyRetention:${new Date(hour * HOUR_MS).toISOString()}`
    const job = await this.deps.batchJobs.enqueue(
      { kind: 'historyRetention', appId: '', payload: { endedBefore }, dueAt: now, scheduleKey },
      now,
    )
    this.queuedHour = hour
    if (job) this.deps.worker.wake()
  }

  readonly handler: BatchJobHandler = async (job, context) => {
    const endedBefore = new Date(String(job.payload.endedBefore))
    const progress: BulkProgress = job.progress ?? { total: 0, done: 0, failed: [] }
    for (;;) {
      const batch = await this.deps.purge.ended(endedFilter({ endedBefore }), RETENTION_BATCH, false)
      if (batch.length === 0) break
      await this.deps.purge.purge(batch, 'retention')
      progress.done += batch.length
      progress.total = progress.done
      if (!(await this.deps.batchJobs.recordProgress(job, this.deps.worker.owner, progress, undefined, context.now)))
        throw new Error('the history retention job lost its lease; its new holder goes on')
    }
    if (progress.done > 0) context.log.info({ removed: progress.done, endedBefore }, 'ended instances removed after the retention period')
  }
}

async function historyRetentionPlugin(fastify: FastifyInstance, options: HistoryRetentionOptions): Promise<void> {
  if (options.days === undefined) return
  const retention = new HistoryRetention(
    { purge: fastify.instancePurge, batchJobs: fastify.batchJobs, worker: fastify.batchWorker, now: fastify.clock },
    options.days,
  )
  fastify.batchHandlers.set('historyRetention', retention.handler)
  const loop = new PollLoop(
    options.pollMs,
    () => retention.queueThisHour(),
    (error) => fastify.log.error({ err: error }, 'the history retention job could not be queued; the next poll tries again'),
  )
  fastify.addHook('onReady', async () => loop.start())
  fastify.addHook('preClose', async () => loop.stop(options.pollMs))
}

export default fp(historyRetentionPlugin, {
  name: 'history-retention',
  dependencies: ['instance-purge', 'batch-jobs', 'batch-worker', 'clock'],
})
