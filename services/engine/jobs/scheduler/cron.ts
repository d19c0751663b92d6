/**
 * Cron expressions of schedules (croner): five fields, or six with a leading seconds field
 * (docs/reference/jobs.md#schedules), read in an IANA time zone — UTC when the schedule names none, so every engine
 * computes the same ticks whatever the zone of its host.
 */
import { Cron } from 'croner'

export const DEFAULT_TIMEZONE = 'UTC'

export interface CronDefinition {
  cron: string
  timezone?: string
}

export class CronDefinitionError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'CronDefinitionError'
  }
}

/** Compiles a definition; throws CronDefinitionError naming what is wrong. Starts no timer. */
export function compileCron(definition: CronDefinition): Cron {
  const timezone = definition.timezone ?? DEFAULT_TIMEZONE
  let compiled: Cron
  try {
    compiled = new Cron(definition.cron, { mode: '5-or-6-parts', timezone })
  } catch (error) {
    throw new CronDefinitionError(`invalid cron "${definition.cron}": ${(error as Error).message}`)
  }
  try {
    // croner only notices an unknown time zone when it computes a date.
    compiled.nextRun(new Date(0))
  } catch {
    throw new CronDefinitionError(`unknown time zone "${timezone}"`)
  }
  return compiled
}

/** The latest tick at or before `at`, or null when the cron never fired before it. */
export function latestTickAtOrBefore(cron: Cron, at: Date): Date | null {
  // previousRuns counts a run earlier in the reference's second, so 1 ms later includes `at` itself.
  return cron.previousRuns(1, new Date(at.getTime() + 1))[0] ?? null
}

/** The first tick strictly after `after`, or null when the cron never fires again. */
export function nextTickAfter(cron: Cron, after: Date): Date | null {
  return cron.nextRun(after)
}
