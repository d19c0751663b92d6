/**
 * The model types besides process and form, beyond their structure: the function map of a
 * functions model, and a job scheduler's schedule ids, cron patterns and time zones.
 */
import { Cron } from 'croner'
import type { FlowFunctionDefinition } from '../types.js'
import { Fault, child } from './checks.js'
import { functionMap } from './flow-functions.js'

export function functionsBody(body: { functions: Record<string, FlowFunctionDefinition> }, appFunctions: ReadonlySet<string>): void {
  functionMap(body.functions, 'modelBody.functions', appFunctions)
}

function cronPattern(pattern: string, path: string): void {
  const fields = pattern.trim().split(/\s+/).length
  // Five fields, or six with a leading seconds field (docs/reference/jobs.md#schedules); `@daily` and friends too.
  if (!pattern.startsWith('@') && fields !== 5 && fields !== 6)
    throw new Fault(path, 'must have five fields, or six with a leading seconds field')
  try {
    new Cron(pattern, { paused: true })
  } catch (error) {
    throw new Fault(path, `is not a valid cron expression: ${(error as Error).message}`)
  }
}

function timeZone(zone: string, path: string): void {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone })
  } catch {
    throw new Fault(path, `is not a known time zone: ${zone}`)
  }
}

interface Schedule {
  id: string
  cron: string
  timezone?: string
}

export function jobSchedulerBody(body: { schedules: Schedule[] }): void {
  const ids = new Set<string>()
  body.schedules.forEach((schedule, position) => {
    const path = child('modelBody.schedules', position)
    if (ids.has(schedule.id)) throw new Fault(child(path, 'id'), `repeats schedule id "${schedule.id}"`)
    ids.add(schedule.id)
    cronPattern(schedule.cron, child(path, 'cron'))
    if (schedule.timezone !== undefined) timeZone(schedule.timezone, child(path, 'timezone'))
  })
}
