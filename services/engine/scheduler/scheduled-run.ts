/**
 * The `scheduledRun` job: what a fired schedule does — start a process (as `initiatorUserId` when
 * the schedule names one) or run an app-wide function standalone. The work itself is the engine's
 * (ScheduledActions); this handler reads the job and hands it over.
 */
import type { JsonObject } from '../runtime/types.js'
import type { BatchJobHandler } from '../batch/handlers.js'
import { scheduledRunPayload } from './definitions.js'

export interface ScheduledStart {
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
      const started = await actions.startProcess({ ...tenant, processId, input, ...(initiatorUserId === undefined ? {} : { initiatorUserId }) })
      log.info({ ...schedule, processId, processInstanceId: started.processInstanceId }, 'scheduled process started')
      return
    }
    const { functionId, inputParams } = payload.runFunction
    await actions.runFunction({ ...tenant, functionId, inputParams: inputParams ?? {} })
    log.info({ ...schedule, functionId }, 'scheduled function ran')
  }
}
