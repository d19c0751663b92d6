/**
 * `POST /process/start` (the gateway's `/action/start` too), `POST /external/process/start` (the
 * same handler) and `GET /process/:processInstanceId`.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { getProcessStatus, startExternalProcess, startProcess } from '../../../openapi/generated/engine-routes.js'
import type { ProcessStartRequest, ProcessStartResult } from '../../../openapi/generated/schemas.js'
import { requireActor } from '../../../plugins/identity/actor.js'
import { routeFrom } from '../../../lib/server/route.js'

async function processRoutes(fastify: FastifyInstance): Promise<void> {
  const fail: ErrorFactory<EngineErrorCode> = fastify.fail
  const typed = fastify.withTypeProvider<TypeBoxTypeProvider>()

  async function start(request: FastifyRequest<{ Body: ProcessStartRequest }>, _reply: FastifyReply): Promise<ProcessStartResult> {
    const body = request.body
    // A missing processId answers 500 (docs/reference/http.md#unusual-statuses).
    if (!body.processId) throw fail('wm3060', { args: ['processId'], parameters: { field: 'body.processId' } })
    const { stored } = await fastify.processStarter.start({
      // The route requires the user header: identity has resolved the actor.
      actor: requireActor(request),
      appId: body.appId,
      processId: body.processId,
      input: body.input,
      organizationId: body.organizationId,
      initiatorUserId: body.initiatorUserId,
      additionalHeaders: request.headers.additionalheaders,
      lockFirstTask: false,
      // An idempotent start creates the instance its claim names (see lifecycle/idempotent-start.ts).
      ...(request.idempotentStart ? { processInstanceId: request.idempotentStart.processInstanceId } : {}),
    })
    const { processInstanceId, processName, businessKey, processStart } = stored.processInstance
    return { context: { processInstance: { processInstanceId, processName, businessKey, processStart } } }
  }

  const idempotent = fastify.idempotentStarts.hooks()
  typed.route({ ...routeFrom(startProcess), ...idempotent, handler: start })
  typed.route({ ...routeFrom(startExternalProcess), ...idempotent, handler: start })

  typed.route({
    ...routeFrom(getProcessStatus),
    handler: async (request) => fastify.processStarter.status(requireActor(request), request.params.processInstanceId, request.query.appId),
  })
}

export default fp(processRoutes, {
  name: 'engine-process-routes',
  dependencies: ['process-starter', 'idempotent-starts', 'identity', 'errors'],
})
