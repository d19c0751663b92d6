/**
 * The `scheduledRun` job: what a fired schedule does — start a process (as `initiatorUserId` when
 * the schedule names one) or run an app-wide function standalone. The work itself is the engine's
 * (ScheduledActions); this handler reads the job and hands it over.
 */
import { createHash } from 'node:crypto'
import type { JsonObject } from '../../../../model/types.js'
import type { BatchJobHandler } from '../batch/handlers.js'
import { scheduledRunPayload } from './definitions.js'

export interface ScheduledStart {
  /** Derived from the job, so a job that runs again after a crash finds its instance already started. */
  processInstanceId: string
  appId: string
  organizationId?: string
  processId: string
  input: JsonObject
  initiatorUserId?: string
}

export interface ScheduledFunctionRun {
  appId: string
  organizationId?: string
  functionId: string
  inputParams: JsonObject
}

/** The engine's operations a schedule can fire; they throw ServiceErrors like the endpoints do. */
export interface ScheduledActions {
  startProcess(request: ScheduledStart): Promise<{ processInstanceId: string }>
  runFunction(request: ScheduledFunctionRun): Promise<{ output: JsonObject }>
}

export function scheduledRunHandler(actions: ScheduledActions): BatchJobHandler {
  return async (job, { log }) => {
    const payload = scheduledRunPayload(job.payload)
    const tenant = { appId: job.appId, ...(job.organizationId === undefined ? {} : { organizationId: job.organizationId }) }
    const schedule = { modelID: payload.modelID, scheduleId: payload.scheduleId, tick: payload.tick }
    if ('startProcess' in payload) {
      const { processId, input, initiatorUserId } = payload.startProcess
      const started = await actions.startProcess({
        ...tenant,
        processInstanceId: uuidFrom(`scheduledRun:${String(job._id)}`),
        processId,
        input,
        ...(initiatorUserId === undefined ? {} : { initiatorUserId }),
      })
      log.info({ ...schedule, processId, processInstanceId: started.processInstanceId }, 'scheduled process started')
      return
    }
    const { functionId, inputParams } = payload.runFunction
    await actions.runFunction({ ...tenant, functionId, inputParams: inputParams ?? {} })
    log.info({ ...schedule, functionId }, 'scheduled function ran')
  }
}

/** A name-based UUID (version 5 layout, SHA-256 here): the same text always gives the same id. */
export function uuidFrom(text: string): string {
  const bytes = createHash('sha256').update(text).digest().subarray(0, 16)
  bytes[6] = ((bytes[6] as number) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] as number) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}
