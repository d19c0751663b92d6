/**
 * The `schedules` collection (one document per deployed schedule, StoredSchedule) and the reads of
 * jobScheduler models the deploy job needs. Schedules live in the store, so they survive restarts
 * and every engine sees the ones any engine deployed.
 */
import { repositoryPlugin } from '../../../../plugins/store/repository-plugin.js'
import type { Collection, Store } from '../../../../store/port.js'
import { Collections, type ScheduleAction, type StoredModel, type StoredSchedule } from '../../../../store/collections.js'
import { scheduleDocumentId, type Tenant, tenantFilter } from '../../../../store/tenant.js'
import { compileCron, nextTickAfter } from './cron.js'
import { actionOf } from './definitions.js'

declare module 'fastify' {
  interface FastifyInstance {
    schedules: ScheduleRepository
  }
}

/** A schedule as a jobScheduler model version defines it, validated. */
export type ScheduleDefinition = ScheduleAction & {
  scheduleId: string
  cron: string
  timezone?: string
}

export interface ModelScheduleSet {
  appId: string
  organizationId: string
  modelID: string
  modelVersion: number
  definitions: readonly ScheduleDefinition[]
}

export { scheduleDocumentId } from '../../../../store/tenant.js'

export class ScheduleRepository {
  constructor(
    private readonly schedules: Collection<StoredSchedule>,
    private readonly models: Collection<StoredModel>,
  ) {}

  async ensureIndexes(): Promise<void> {
    await this.schedules.createIndex({ organizationId: 1, appId: 1, modelID: 1 }, { name: 'engine_tenant_schedules_model' })
    await this.schedules.createIndex({ nextTickAt: 1 }, { name: 'engine_schedules_next_tick' })
  }

  /** The schedules whose next tick has come. */
  async due(now: Date): Promise<StoredSchedule[]> {
    return this.schedules.find({ nextTickAt: { $lte: now } }).toArray()
  }

  async ofModel(tenant: Tenant, modelID: string): Promise<StoredSchedule[]> {
    return this.schedules.find({ ...tenantFilter(tenant), modelID }, { sort: { scheduleId: 1 } }).toArray()
  }

  /** The latest live version of a jobScheduler model of the tenant, or null. */
  async latestLiveModel(tenant: Tenant, modelID: string): Promise<StoredModel | null> {
    return this.models.findOne({ ...tenantFilter(tenant), modelID, type: 'jobScheduler', live: true }, { sort: { version: -1 } })
  }

  /**
   * Makes the model's stored schedules exactly `set.definitions`: new ones are added, changed ones
   * rewritten, the others removed. A schedule whose cron and time zone are unchanged keeps its
   * `lastFiredAt`; a new or re-timed one starts from `now`, so no tick before it fires. Each write is
   * idempotent, so a deploy that failed half-way is repaired by its retry.
   */
  async replaceModelSchedules(set: ModelScheduleSet, now: Date): Promise<{ upserted: number; removed: number }> {
    const existing = new Map((await this.ofModel(set, set.modelID)).map((schedule) => [schedule.scheduleId, schedule]))
    for (const definition of set.definitions) {
      const _id = scheduleDocumentId(set, set.modelID, definition.scheduleId)
      const previous = existing.get(definition.scheduleId)
      const sameTiming = previous !== undefined && previous.cron === definition.cron && previous.timezone === definition.timezone
      const lastFiredAt = sameTiming ? previous.lastFiredAt : now
      const nextTickAt = nextTickAfter(compileCron(definition), lastFiredAt)
      const replacement = {
        _id,
        ...tenantFilter(set),
        modelID: set.modelID,
        modelVersion: set.modelVersion,
        scheduleId: definition.scheduleId,
        cron: definition.cron,
        ...(definition.timezone === undefined ? {} : { timezone: definition.timezone }),
        ...actionOf(definition),
        lastFiredAt,
        ...(nextTickAt === null ? {} : { nextTickAt }),
        createdAt: previous?.createdAt ?? now,
        updatedAt: now,
      } as StoredSchedule
      await this.schedules.replaceOne({ _id }, replacement, { upsert: true })
    }
    const keep = set.definitions.map((definition) => definition.scheduleId)
    const removed = await this.schedules.deleteMany({ ...tenantFilter(set), modelID: set.modelID, scheduleId: { $nin: keep } })
    return { upserted: set.definitions.length, removed: removed.deletedCount }
  }

  /**
   * Records that `tick` fired and which tick comes next. Only moves forward: when another engine
   * already recorded this tick or a later one, nothing changes.
   */
  async markFired(schedule: Pick<StoredSchedule, '_id'>, tick: Date, nextTickAt: Date | null): Promise<void> {
    await this.schedules.updateOne({ _id: schedule._id, lastFiredAt: { $lt: tick } }, nextTick({ lastFiredAt: tick }, nextTickAt))
  }

  /** Corrects a `nextTickAt` that came without a tick to fire, unless the schedule changed meanwhile. */
  async resetNextTick(schedule: Pick<StoredSchedule, '_id' | 'lastFiredAt'>, nextTickAt: Date | null): Promise<void> {
    await this.schedules.updateOne({ _id: schedule._id, lastFiredAt: schedule.lastFiredAt }, nextTick({}, nextTickAt))
  }
}

function nextTick(set: Partial<StoredSchedule>, nextTickAt: Date | null): Record<string, unknown> {
  return nextTickAt === null ? { $set: set, $unset: { nextTickAt: '' } } : { $set: { ...set, nextTickAt } }
}

export function scheduleRepository(store: Store): ScheduleRepository {
  return new ScheduleRepository(store.collection<StoredSchedule>(Collections.schedules), store.collection<StoredModel>(Collections.models))
}

export default repositoryPlugin('schedules', ({ store }) => scheduleRepository(store), { name: 'schedules' })
