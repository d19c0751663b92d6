/** `/external/process/changeStep`: moves an instance to a step (change-step.ts). */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { changeProcessStep } from '../../../openapi/generated/engine-routes.js'
import { routeCommand } from '../instances/command-routes.js'

/** The route requires the user header: identity has resolved the actor before the handler runs. */
async function changeStepRoutes(fastify: FastifyInstance): Promise<void> {
  const service = fastify.stepChanges
  routeCommand(fastify, changeProcessStep, service.changeStep.bind(service))
}

export default fp(changeStepRoutes, {
  name: 'engine-change-step-routes',
  dependencies: ['step-changes', 'identity', 'errors'],
})
