/**
 * The scheduler: deploy jobs turn a jobScheduler model into stored schedules, and every engine
 * polls for the schedules whose `nextTickAt` has come, turning each due tick into a `scheduledRun`
 * batch job.
 *
 * Exactly one firing per tick across engines: the job carries the unique key
 * `<schedule _id>:<tickISO>` (the schedule's id names its tenant, store/tenant.ts), so when several engines see the same tick one insert
 * wins and the others get a duplicate-key error. No burst after downtime: only the latest tick
 * after the schedule's `lastFiredAt` fires, so the ticks missed while no engine ran collapse into
 * one catch-up run.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { StoredBatchJob, StoredSchedule } from '../../../../store/collections.js'
import type { BatchJobHandler } from '../batch/handlers.js'
import { PollLoop } from '../poll-loop.js'
import type { BatchJobRepository } from '../batch/repository.js'
import { scheduleDocumentId, tenantFilter } from '../../../../store/tenant.js'
import { compileCron, latestTickAtOrBefore, nextTickAfter } from './cron.js'
import { actionOf, deployPayload, scheduleDefinitions, type ScheduledRunPayload } from './definitions.js'
import type { ScheduleDefinition, ScheduleRepository } from './repository.js'

/** Deploys re-read the model after writing; a model that keeps changing meanwhile is left to a retry. */
const DEPLOY_ATTEMPTS = 3

export function scheduleKey(schedule: Pick<StoredSchedule, 'organizationId' | 'appId' | 'modelID' | 'scheduleId'>, tick: Date): string {
  return `${scheduleDocumentId(schedule, schedule.modelID, schedule.scheduleId)}:${tick.toISOString()}`
}

/**
 * The `deploy` job: makes the stored schedules of the model those of its latest live version
 * (none when it has no live version, so a draft never schedules anything). Whichever of several
 * deploy jobs of one model runs last, the result is the latest version: after writing, the handler
 * checks that no newer version went live meanwhile, and deploys that one if it did.
 */
export function deployHandler(schedules: ScheduleRepository): BatchJobHandler {
  return async (job, { now, log }) => {
    const { modelID, version } = deployPayload(job.payload)
    const tenant = { organizationId: job.organizationId ?? '', appId: job.appId }
    for (let attempt = 0; attempt < DEPLOY_ATTEMPTS; attempt++) {
      const model = await schedules.latestLiveModel(tenant, modelID)
      const definitions: ScheduleDefinition[] = model ? scheduleDefinitions(model) : []
      const result = await schedules.replaceModelSchedules(
        {
          ...tenant,
          modelID,
          modelVersion: model?.version ?? 0,
          definitions,
        },
        now,
      )
      const latest = await schedules.latestLiveModel(tenant, modelID)
      if ((latest?.version ?? 0) === (model?.version ?? 0)) {
        log.info({ modelID, requestedVersion: version, deployedVersion: model?.version ?? null, ...result }, 'schedules deployed')
        return
      }
    }
    throw new Error(`jobScheduler model ${modelID} of app ${job.appId} kept changing while its schedules were deployed`)
  }
}

export interface SchedulerOptions {
  schedules: ScheduleRepository
  batchJobs: BatchJobRepository
  pollMs: number
  log: FastifyBaseLogger
  /** Called after a pass fired jobs (the engine wakes its worker). */
  onFired?: (jobs: StoredBatchJob[]) => void
  now?: () => Date
}

export class Scheduler {
  private readonly now: () => Date
  private readonly loop: PollLoop

  constructor(private readonly options: SchedulerOptions) {
    this.now = options.now ?? (() => new Date())
    this.loop = new PollLoop(
      options.pollMs,
      async () => {
        const fired = await this.fireDue()
        if (fired.length > 0) options.onFired?.(fired)
      },
      (error) => options.log.error({ err: error }, 'scheduler poll failed'),
    )
  }

  start(): void {
    this.loop.start()
  }

  async stop(): Promise<void> {
    await this.loop.stop(this.options.pollMs)
  }

  /** Fires the due tick of every schedule whose next tick has come; resolves with the jobs this engine inserted. */
  async fireDue(): Promise<StoredBatchJob[]> {
    const now = this.now()
    const fired: StoredBatchJob[] = []
    for (const schedule of await this.options.schedules.due(now)) {
      try {
        const job = await this.fire(schedule, now)
        if (job) fired.push(job)
      } catch (error) {
        // One broken schedule must not keep the others from firing.
        this.options.log.error({ err: error, scheduleId: schedule._id }, 'could not fire a schedule')
      }
    }
    return fired
  }

  private async fire(schedule: StoredSchedule, now: Date): Promise<StoredBatchJob | null> {
    const cron = compileCron(schedule)
    const tick = latestTickAtOrBefore(cron, now)
    const nextTickAt = nextTickAfter(cron, now)
    if (!tick || tick.getTime() <= schedule.lastFiredAt.getTime()) {
      await this.options.schedules.resetNextTick(schedule, nextTickAt)
      return null
    }
    const payload: ScheduledRunPayload = {
      modelID: schedule.modelID,
      modelVersion: schedule.modelVersion,
      scheduleId: schedule.scheduleId,
      tick: tick.toISOString(),
      ...actionOf(schedule),
    }
    const job = await this.options.batchJobs.enqueue(
      {
        kind: 'scheduledRun',
        ...tenantFilter(schedule),
        payload,
        dueAt: now,
        scheduleKey: scheduleKey(schedule, tick),
      },
      now,
    )
    await this.options.schedules.markFired(schedule, tick, nextTickAt)
    return job
  }
}
