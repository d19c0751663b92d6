/**
 * Builds the RunEnvironment of one request: the acting user, a FlowHost scoped to the app, the
 * limits every run obeys, the clock and the id generator. Decorates `fastify.runEnvironments`.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Agent } from 'undici'
import type { Actor } from '../../../plugins/identity/plugin.js'
import type { Store } from '../../../plugins/store/port.js'
import type { ProcessModels } from '../models/service.js'
import type { RunEnvironment, RunLimits, RuntimeUser } from '../runtime/types.js'
import { decodeAdditionalHeaders } from './additional-headers.js'
import { StoreFlowHost } from './host.js'
import { UnitOfWork } from './unit-of-work.js'

declare module 'fastify' {
  interface FastifyInstance {
    runEnvironments: RunEnvironments
  }
}

/** Limits besides the time limit (FLOW_TIMEOUT_MS): generous for real models, fatal for runaway ones. */
export const FLOW_LIMITS: Omit<RunLimits, 'timeoutMs'> = {
  maxSteps: 10_000,
  maxCallDepth: 10,
  maxAutomaticSteps: 1_000,
}

/** An outbound answer larger than this fails the call rather than the engine's memory. */
const MAX_OUTBOUND_RESPONSE_BYTES = 10 * 1024 * 1024

/** Who acts when a headless call names no user (a scheduled start, an anonymous external start). */
export const SYSTEM_USER: RuntimeUser = { userId: 'system', fullName: 'System', roles: [], swimlanes: [] }

export function runtimeUserOf(actor: Actor): RuntimeUser {
  return { userId: actor.userId, fullName: actor.fullName, roles: actor.roles, swimlanes: actor.swimlanes, ...(actor.unit ? { unit: actor.unit } : {}) }
}

export interface EnvironmentRequest {
  actor: RuntimeUser
  appId: string
  organizationId: string
  /** The raw `additionalheaders` request header. */
  additionalHeaders?: string | string[] | undefined
}

/** A request's RunEnvironment, with the unit of work that holds its data writes until the commit. */
export interface RequestEnvironment extends RunEnvironment {
  unitOfWork: UnitOfWork
}

export class RunEnvironments {
  readonly limits: RunLimits

  constructor(
    private readonly store: Store,
    private readonly processModels: ProcessModels,
    private readonly dispatcher: Agent,
    timeoutMs: number,
  ) {
    this.limits = { timeoutMs, ...FLOW_LIMITS }
  }

  async create(request: EnvironmentRequest): Promise<RequestEnvironment> {
    const unitOfWork = new UnitOfWork(this.store)
    const host = new StoreFlowHost({
      unitOfWork,
      store: this.store,
      dispatcher: this.dispatcher,
      appId: request.appId,
      organizationId: request.organizationId,
      appFunctions: await this.processModels.appFunctions(request.appId),
      additionalHeaders: decodeAdditionalHeaders(request.additionalHeaders),
    })
    return { actor: request.actor, host, savepoints: unitOfWork, unitOfWork, limits: this.limits, now: () => new Date(), newId: randomUUID }
  }
}

export interface RunEnvironmentsPluginOptions {
  flowTimeoutMs: number
}

async function runEnvironmentsPlugin(fastify: FastifyInstance, options: RunEnvironmentsPluginOptions): Promise<void> {
  const dispatcher = new Agent({ maxResponseSize: MAX_OUTBOUND_RESPONSE_BYTES })
  fastify.decorate('runEnvironments', new RunEnvironments(fastify.store, fastify.processModels, dispatcher, options.flowTimeoutMs))
  fastify.addHook('onClose', async () => {
    await dispatcher.close()
  })
}

export default fp(runEnvironmentsPlugin, { name: 'run-environments', dependencies: ['store', 'process-models'] })
