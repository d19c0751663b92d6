/**
 * Reading the `schedules` of a jobScheduler model (docs/models.md#other-model-types) and the payloads of the jobs the
 * scheduler works with. A fault is a PermanentJobError naming its path: retrying cannot fix a model.
 */
import { PermanentJobError } from '../batch/handlers.js'
import { validateModel } from '../../../../model/validation.js'
import type { ScheduleAction, StoredModel } from '../../../../store/collections.js'
import { compileCron, CronDefinitionError } from './cron.js'

/** A schedule as a jobScheduler model version defines it, validated. */
export type ScheduleDefinition = ScheduleAction & {
  scheduleId: string
  cron: string
  timezone?: string
}

/** A jobScheduler model body once validateModel accepted it. */
interface JobSchedulerBody {
  schedules: Array<ScheduleAction & { id: string; cron: string; timezone?: string }>
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function nonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.length > 0
}

function fault(path: string, problem: string): PermanentJobError {
  return new PermanentJobError(`${path} ${problem}`)
}

/** Only the action of something that carries one (a schedule, a definition, a job payload). */
export function actionOf(carrier: ScheduleAction): ScheduleAction {
  return 'startProcess' in carrier ? { startProcess: carrier.startProcess } : { runFunction: carrier.runFunction }
}

/**
 * The schedules of a jobScheduler model version. The gateway validated the model on insert; it is
 * checked again here with the same validator because the deploy reads whatever the store holds,
 * and each cron is compiled the way the scheduler reads it.
 */
export function scheduleDefinitions(model: Pick<StoredModel, 'modelID' | 'type' | 'modelBody'>): ScheduleDefinition[] {
  const invalid = validateModel(model)
  if (invalid) throw fault(invalid.path, invalid.message)
  const { schedules } = model.modelBody as unknown as JobSchedulerBody
  return schedules.map((schedule, index) => {
    const { id, cron, timezone } = schedule
    try {
      compileCron({ cron, ...(timezone === undefined ? {} : { timezone }) })
    } catch (error) {
      if (error instanceof CronDefinitionError) throw fault(`modelBody.schedules[${index}]`, error.message)
      throw error
    }
    return { scheduleId: id, cron, ...(timezone === undefined ? {} : { timezone }), ...actionOf(schedule) }
  })
}

/** The action a scheduledRun job payload carries (copied from its schedule when it fired). */
function payloadAction(payload: Record<string, unknown>): ScheduleAction {
  const { startProcess, runFunction } = payload
  if ((startProcess === undefined) === (runFunction === undefined))
    throw fault('payload', 'must have exactly one of startProcess and runFunction')
  if (startProcess !== undefined) {
    if (!isObject(startProcess) || !nonEmptyString(startProcess.processId) || !isObject(startProcess.input)) {
      throw fault('payload.startProcess', 'must name a processId and an input object')
    }
    const { processId, input, initiatorUserId } = startProcess
    if (initiatorUserId !== undefined && !nonEmptyString(initiatorUserId))
      throw fault('payload.startProcess.initiatorUserId', 'must be a non-empty string')
    return { startProcess: { processId, input, ...(initiatorUserId === undefined ? {} : { initiatorUserId }) } }
  }
  if (!isObject(runFunction) || !nonEmptyString(runFunction.functionId)) throw fault('payload.runFunction', 'must name a functionId')
  const { functionId, inputParams } = runFunction
  if (inputParams !== undefined && !isObject(inputParams)) throw fault('payload.runFunction.inputParams', 'must be an object')
  return { runFunction: { functionId, ...(inputParams === undefined ? {} : { inputParams }) } }
}

/** A deploy job's payload as the gateway's insertModel writes it. */
export interface DeployPayload {
  modelID: string
  version?: number
}

export function deployPayload(payload: Record<string, unknown>): DeployPayload {
  const { modelID, version } = payload
  if (!nonEmptyString(modelID)) throw fault('payload.modelID', 'must be a non-empty string')
  if (version !== undefined && typeof version !== 'number') throw fault('payload.version', 'must be a number')
  return { modelID, ...(version === undefined ? {} : { version }) }
}

/** A scheduledRun job's payload: the schedule that fired, its tick, and what it does (copied at firing). */
export type ScheduledRunPayload = ScheduleAction & {
  modelID: string
  modelVersion: number
  scheduleId: string
  /** ISO date-time of the tick. */
  tick: string
}

export function scheduledRunPayload(payload: Record<string, unknown>): ScheduledRunPayload {
  const { modelID, modelVersion, scheduleId, tick } = payload
  if (!nonEmptyString(modelID)) throw fault('payload.modelID', 'must be a non-empty string')
  if (typeof modelVersion !== 'number') throw fault('payload.modelVersion', 'must be a number')
  if (!nonEmptyString(scheduleId)) throw fault('payload.scheduleId', 'must be a non-empty string')
  if (!nonEmptyString(tick)) throw fault('payload.tick', 'must be a non-empty string')
  return { modelID, modelVersion, scheduleId, tick, ...payloadAction(payload) }
}
