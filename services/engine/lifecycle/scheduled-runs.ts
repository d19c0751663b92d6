/**
 * What fired schedules do in this engine: the `scheduledRun` job handler, backed by the engine's
 * own services, so a scheduled start validates, stores and notifies exactly like `/process/start`,
 * and a scheduled function runs exactly like `/external/function/:id/execute` in standalone mode.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ExternalService } from './headless.js'
import type { ProcessStarter } from './start.js'
import { type ScheduledActions, scheduledRunHandler } from '../jobs/scheduler/scheduled-run.js'

export interface EngineActionServices {
  processStarter: Pick<ProcessStarter, 'start'>
  functions: Pick<ExternalService, 'executeFunction'>
}

/**
 * A schedule has no requesting user: the actor is null, so a process is the named initiator's (the
 * system's when none is named) and a function runs as the system user. Failures are the endpoints'
 * catalogue errors; the worker retries only those that are not the request's fault (5xx).
 */
export function engineScheduledActions({ processStarter, functions }: EngineActionServices): ScheduledActions {
  return {
    async startProcess(request) {
      const { stored } = await processStarter.start({
        actor: null,
        appId: request.appId,
        processId: request.processId,
        input: request.input,
        organizationId: request.organizationId,
        initiatorUserId: request.initiatorUserId,
        processInstanceId: request.processInstanceId,
        lockFirstTask: false,
      })
      return { processInstanceId: stored._id }
    },

    async runFunction(request) {
      const tenant = { appId: request.appId, ...(request.organizationId === undefined ? {} : { organizationId: request.organizationId }) }
      const { output } = await functions.executeFunction(
        null,
        request.functionId,
        { ...tenant, inputParams: request.inputParams },
        undefined,
      )
      return { output }
    },
  }
}

async function scheduledRunsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.batchHandlers.set(
    'scheduledRun',
    scheduledRunHandler(engineScheduledActions({ processStarter: fastify.processStarter, functions: fastify.externalService })),
  )
}

export default fp(scheduledRunsPlugin, {
  name: 'scheduled-runs',
  dependencies: ['batch-worker', 'process-starter', 'external-service'],
})
