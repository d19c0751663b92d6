/**
 * Stores the escalation jobs that the changes creating their tasks left for later (jobs.ts): every
 * engine polls its instances' `escalationsDueAt` for escalations falling due within the horizon
 * and inserts their jobs. The schedule key makes each insert once across engines and passes: the
 * others get a duplicate key, as the scheduler's ticks do (../scheduler/service.ts).
 *
 * Each pass reads from where the one before stopped, less LOOKBACK_MS, to `now` plus the horizon:
 * a change that computed its escalations just before a pass may be stored just after it, and the
 * look back reads it again. The first pass of an engine reads from the beginning, so escalations
 * that came due while no engine ran get their jobs. The keys a pass stored (or found stored) are
 * kept while the look back may read them again, so each is inserted once per engine.
 */
import type { FastifyBaseLogger } from 'fastify'
import type { StoredContext } from '../../../../store/collections.js'
import type { CompiledProcess, ProcessInstance } from '../../../../runtime/types.js'
import type { BatchJobRepository } from '../batch/repository.js'
import { escalationJob, escalationScheduleKey, ESCALATION_HORIZON_MS, pendingEscalations } from './jobs.js'

/** How far each pass reads back into the one before: longer than a change takes to be stored. */
export const LOOKBACK_MS = 60_000

export interface EscalationPromoterDependencies {
  contexts: { escalationsDueIn(from: Date | undefined, to: Date): Promise<StoredContext[]> }
  models: { ofInstance(instance: ProcessInstance): Promise<Pick<CompiledProcess, 'step'>> }
  batchJobs: Pick<BatchJobRepository, 'enqueue'>
  now: () => Date
  log: FastifyBaseLogger
}

export class EscalationPromoter {
  /** Where the last pass stopped reading: `now` plus the horizon, at its time. */
  private readUntil: Date | undefined
  /** The schedule keys stored by a pass (or found stored), with their due times, while the look back may meet them. */
  private readonly stored = new Map<string, number>()

  constructor(private readonly deps: EscalationPromoterDependencies) {}

  /** One pass: stores the jobs of the escalations coming due; answers how many it inserted. */
  async promote(): Promise<number> {
    const { contexts, models, batchJobs, log } = this.deps
    const now = this.deps.now()
    const from = this.readUntil === undefined ? undefined : new Date(this.readUntil.getTime() - LOOKBACK_MS)
    const to = new Date(now.getTime() + ESCALATION_HORIZON_MS)
    let inserted = 0
    for (const { processInstance: instance } of await contexts.escalationsDueIn(from, to)) {
      let compiled: Pick<CompiledProcess, 'step'>
      try {
        compiled = await models.ofInstance(instance)
      } catch (error) {
        // Its model cannot be read, so neither could its escalation jobs run: the others' go on.
        log.warn({ err: error, processInstanceId: instance.processInstanceId }, 'the escalations of an instance could not be read')
        continue
      }
      for (const escalation of pendingEscalations(instance, compiled)) {
        const dueAt = escalation.dueAt.getTime()
        const key = escalationScheduleKey(escalation.task.taskId, escalation.position)
        if (dueAt > to.getTime() || (from !== undefined && dueAt <= from.getTime()) || this.stored.has(key)) continue
        if (await batchJobs.enqueue(escalationJob(instance, escalation), now)) inserted++
        this.stored.set(key, dueAt)
      }
    }
    this.readUntil = to
    this.forgetBefore(to.getTime() - LOOKBACK_MS)
    if (inserted > 0) log.debug({ inserted }, 'escalation jobs stored')
    return inserted
  }

  /** The next passes read from `to` less the look back on: keys due before that are not met again. */
  private forgetBefore(time: number): void {
    for (const [key, dueAt] of this.stored) if (dueAt <= time) this.stored.delete(key)
  }
}
