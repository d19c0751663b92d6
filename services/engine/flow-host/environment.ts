/**
 * Builds the RunEnvironment of one request: the acting user, a FlowHost scoped to the app, the
 * limits every run obeys, where functions run (inline first, then the tenant's share of the worker
 * pool), the clock and the id generator. Decorates `fastify.runEnvironments`.
 */
import { randomUUID } from 'node:crypto'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Dispatcher } from 'undici'
import type { Clock } from '../../../plugins/clock/plugin.js'
import { newInstanceId } from '../../../lib/instance-id.js'
import { listeningPorts } from '../../../lib/outbound/destination-guard.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import type { EngineMetrics } from '../../../lib/telemetry/engine-metrics.js'
import type { Tracing } from '../../../lib/telemetry/tracing.js'
import type { Store } from '../../../store/port.js'
import type { ProcessModels } from '../models/service.js'
import type { RunEnvironment, RunLimits, RuntimeUser } from '../../../runtime/types.js'
import { decodeAdditionalHeaders } from './additional-headers.js'
import { InlineFirstRunner } from './isolation/inline-first.js'
import { FunctionPool, type FunctionPoolOptions } from './isolation/pool.js'
import type { DataLimits } from './data-filter.js'
import { type HostLimits, type OutboundTracer, StoreFlowHost } from './host.js'
import { OutboundPolicy } from './outbound-policy.js'
import { UnitOfWork } from './unit-of-work.js'

declare module 'fastify' {
  interface FastifyInstance {
    runEnvironments: RunEnvironments
  }
}

/** Limits besides the time limit (FLOW_TIMEOUT_MS): generous for real models, fatal for runaway ones. */
export const FLOW_LIMITS: Omit<RunLimits, 'timeoutMs' | 'inlineBudgetMs'> = {
  // Model expressions run on the engine's thread: 20,000 nodes are a few ms of work (real ones take tens).
  expressionNodes: 20_000,
  maxSteps: 10_000,
  maxCallDepth: 10,
  maxAutomaticSteps: 1_000,
}

/** An outbound answer larger than this fails the call rather than the engine's memory. */
const MAX_OUTBOUND_RESPONSE_BYTES = 10 * 1024 * 1024

/** Who acts when a headless call names no user (a scheduled start, an anonymous external start). */
export const SYSTEM_USER: RuntimeUser = { userId: 'system', fullName: 'System', roles: [], swimlanes: [] }

export function runtimeUserOf(actor: Actor): RuntimeUser {
  return {
    userId: actor.userId,
    fullName: actor.fullName,
    roles: actor.roles,
    swimlanes: actor.swimlanes,
    ...(actor.unit ? { unit: actor.unit } : {}),
  }
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
    private readonly outbound: { dispatcher: Dispatcher; policy: OutboundPolicy },
    private readonly hostLimits: HostLimits,
    private readonly pool: FunctionPool,
    configured: Pick<RunLimits, 'timeoutMs' | 'inlineBudgetMs'>,
    private readonly clock: Clock,
    private readonly telemetry: { metrics: EngineMetrics | null; tracing: Tracing | null } = { metrics: null, tracing: null },
  ) {
    this.limits = { ...configured, ...FLOW_LIMITS }
  }

  async create(request: EnvironmentRequest): Promise<RequestEnvironment> {
    const unitOfWork = new UnitOfWork(this.store)
    const host = new StoreFlowHost({
      unitOfWork,
      store: this.store,
      appId: request.appId,
      organizationId: request.organizationId,
      appFunctions: await this.processModels.appFunctions(request),
      deployed: this.processModels.lookupsFor(request),
      additionalHeaders: decodeAdditionalHeaders(request.additionalHeaders),
      traceOutbound: this.outboundTracer(),
      limits: this.hostLimits,
      // Spread last: a field named after a spread takes V8's slow path (lib/with-fields.ts).
      ...this.outbound,
    })
    const isolation = this.pool.forTenant(JSON.stringify([request.organizationId, request.appId]))
    const { metrics } = this.telemetry
    return {
      actor: request.actor,
      host,
      savepoints: unitOfWork,
      unitOfWork,
      limits: this.limits,
      functionRunner: new InlineFirstRunner(isolation, unitOfWork, metrics ? (reason) => metrics.functionMovedToPool(reason) : undefined),
      isolation,
      now: this.clock,
      newId: randomUUID,
      newInstanceId,
      ...(metrics ? { observer: metrics } : {}),
    }
  }

  /**
   * Outbound calls join the trace of the request that built the environment: its context is taken
   * now, as calls made for a function in the worker pool are answered outside the request's context.
   */
  private outboundTracer(): OutboundTracer | undefined {
    const { tracing } = this.telemetry
    if (!tracing) return undefined
    const parent = tracing.active()
    return (method, url, headers, call) =>
      tracing.clientCall(
        method,
        parent,
        { 'http.request.method': method, 'server.address': url.hostname, 'url.full': `${url.origin}${url.pathname}` },
        headers,
        call,
      )
  }
}

export interface RunEnvironmentsPluginOptions {
  flowTimeoutMs: number
  flowInlineBudgetMs: number
  flowWorkers: FunctionPoolOptions
  flowHttp: { allowedHosts: string[]; forwardHeaders: string[] }
  flowHttpMaxCallsPerRequest: number
  dataLimits: DataLimits
  /** The gateway's port when it is known (not 0): never reached by an http node either. */
  gatewayPort?: number
}

async function runEnvironmentsPlugin(fastify: FastifyInstance, options: RunEnvironmentsPluginOptions): Promise<void> {
  const ownPorts = (): number[] => listeningPorts(fastify.server, options.gatewayPort ?? 0)
  const policy = new OutboundPolicy({ ...options.flowHttp, ownPorts })
  const dispatcher = policy.dispatcher({ maxResponseSize: MAX_OUTBOUND_RESPONSE_BYTES })
  const pool = new FunctionPool(options.flowWorkers)
  const configured = { timeoutMs: options.flowTimeoutMs, inlineBudgetMs: options.flowInlineBudgetMs }
  const telemetry = { metrics: fastify.engineMetrics, tracing: fastify.tracing }
  const environments = new RunEnvironments(
    fastify.store,
    fastify.processModels,
    { dispatcher, policy },
    { httpCallsPerRequest: options.flowHttpMaxCallsPerRequest, data: options.dataLimits },
    pool,
    configured,
    fastify.clock,
    telemetry,
  )
  fastify.decorate('runEnvironments', environments)
  fastify.addHook('onClose', async () => {
    await Promise.all([dispatcher.close(), pool.close()])
  })
}

export default fp(runEnvironmentsPlugin, {
  name: 'run-environments',
  dependencies: ['store', 'process-models', 'clock', 'metrics', 'tracing'],
})
