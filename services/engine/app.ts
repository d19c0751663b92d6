/**
 * The engine as one Fastify plugin, loaded in layers: external wrappers (store, errors, correlation,
 * docs), then app decorators (identity), then the domain route plugins. Only the server files build
 * Fastify itself; tests register this plugin and drive it with inject or a real port.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import { type EngineErrorCode, engineErrorCatalogue } from '../../openapi/generated/errors.js'
import type { Config } from '../../lib/config/config.js'
import { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import type { GenericErrorCodes } from '../../plugins/errors/plugin.js'
import type { Clock } from '../../plugins/clock/plugin.js'
import type { IdentityCodes } from '../../plugins/identity/codes.js'
import serviceBase from '../../plugins/service-base/plugin.js'
import type { LogRings } from '../../plugins/logging/ring.js'
import { EngineMetrics } from '../../lib/telemetry/engine-metrics.js'
import { instrumentStore } from '../../store/instrumented.js'
import { Tracing } from '../../lib/telemetry/tracing.js'
import type { Store } from '../../store/port.js'
import { getEngineMetrics } from '../../openapi/generated/engine-routes.js'
import engineTelemetry from './operations/telemetry.js'
import batchWorker from './jobs/batch/plugin.js'
import batchJobs from './jobs/batch/repository.js'
import batchRoutes from './jobs/batch/routes.js'
import readiness from './operations/readiness.js'
import health, { ENGINE_SERVICE_NAME } from './operations/health-routes.js'
import bulkOperations from './lifecycle/bulk.js'
import bulkRoutes from './lifecycle/bulk-routes.js'
import actionRoutes from './tasks/action-routes.js'
import activities from './instances/activities.js'
import authorization from './instances/authorization.js'
import swimlaneMembers from './tasks/swimlane-members.js'
import contextRoutes from './context/routes.js'
import processControl from './lifecycle/control.js'
import idempotencyKeys from './lifecycle/idempotency-keys.js'
import idempotentStarts from './lifecycle/idempotent-start.js'
import controlRoutes from './lifecycle/control-routes.js'
import sessions from './tasks/session.js'
import contexts from './instances/repository.js'
import processInstances from './instances/service.js'
import runEnvironments from './flow-host/environment.js'
import taskLocks from './tasks/locks.js'
import models from './models/repository.js'
import processModels from './models/service.js'
import notificationRecords from './events/notifications/repository.js'
import notificationRoutes from './events/notifications/routes.js'
import notifications from './events/notifications/service.js'
import processRoutes from './lifecycle/start-routes.js'
import processStarter from './lifecycle/start.js'
import engineLogRoutes from './operations/log-routes.js'
import scheduler from './jobs/scheduler/plugin.js'
import scheduledRuns from './lifecycle/scheduled-runs.js'
import schedules from './jobs/scheduler/repository.js'
import constants from './data/constants.js'
import constantRoutes from './data/constant-routes.js'
import dataCollections from './data/repository.js'
import dataRoutes from './data/routes.js'
import escalations from './jobs/escalations/service.js'
import headlessTaskRoutes from './tasks/headless-routes.js'
import changeStepRoutes from './lifecycle/change-step-routes.js'
import functionRoutes from './functions/routes.js'
import headlessTasks from './tasks/headless.js'
import stepChanges from './lifecycle/change-step.js'
import functionRuns from './functions/service.js'
import migrationRoutes from './lifecycle/migration-routes.js'
import migrations from './lifecycle/migration.js'
import fileRoutes from './files/routes.js'
import noteRoutes from './notes/routes.js'
import processQueries from './queries/repository.js'
import queryRoutes from './queries/routes.js'
import taskRoutes from './tasks/routes.js'
import webhookDeliveries from './events/webhooks/repository.js'
import webhookOutbox from './events/webhooks/outbox.js'
import webhookWorker from './events/webhooks/plugin.js'
import eventsCommitHook from './events/commit-hook.js'

/** Batch jobs one engine runs at the same time; more engines run more. */
const BATCH_CONCURRENCY = 4

export interface EngineAppOptions {
  config: Config
  /** An open store shared with other apps of the process; the app does not close it. */
  store: Store
  /** The log rings of the services running in this process (`wfm` feeds /internal/serviceLog). */
  logRings: LogRings
  /** Where every "now" of the engine comes from; the system clock when not given (tests move their own). */
  clock?: Clock | undefined
}

/** Registers plugins that take no options one after another: each may depend on those before it. */
async function registerInOrder(app: FastifyInstance, plugins: readonly FastifyPluginAsync[]): Promise<void> {
  for (const plugin of plugins) await app.register(plugin)
}

export default async function engineApp(app: FastifyInstance, options: EngineAppOptions): Promise<void> {
  const { telemetry } = options.config
  const metrics = telemetry.metricsEnabled ? new EngineMetrics() : null
  const tracing = Tracing.create(telemetry, ENGINE_SERVICE_NAME)
  await app.register(serviceBase, {
    store: instrumentStore(options.store, { metrics, tracing }),
    clock: options.clock,
    tracing: { tracing },
    metrics: {
      kind: 'engine',
      metrics,
      token: telemetry.metricsToken,
      route: getEngineMetrics,
      codes: { unauthorized: 'wm4014', notFound: 'wm4004' },
    },
    errors: {
      catalogue: engineErrorCatalogue,
      codes: {
        validation: 'wm4000',
        malformedBody: 'wm4001',
        notFound: 'wm4004',
        bodyTooLarge: 'wm4013',
        unsupportedMediaType: 'wm4015',
        internal: 'wm5000',
      } satisfies GenericErrorCodes<EngineErrorCode>,
      style: 'record',
      exposeStack: options.config.development,
    },
    jsonDepth: { maxDepth: options.config.maxJsonDepth, code: 'wm4002' satisfies EngineErrorCode },
    docs: { document: loadOpenApiDocument('engine') },
    caches: { target: 'wfm', types: ['app', 'service'], pollMs: options.config.cachePollMs },
    identity: {
      auth: options.config.auth,
      codes: { unknownUser: 'wm4010', unauthenticated: 'wm4011', forbidden: 'wm4032' } satisfies IdentityCodes<EngineErrorCode>,
    },
  })
  // Repositories, then the services built on them (the workflow core of issue 4).
  await registerInOrder(app, [models, contexts, activities])
  await app.register(taskLocks, { ttlSeconds: options.config.lockTtlSeconds })
  await registerInOrder(app, [notificationRecords, swimlaneMembers, processModels, authorization, notifications])
  // Webhooks: the outbox (a stored change's deliveries, written with it) and the deliveries as the worker tries them.
  await registerInOrder(app, [webhookOutbox, webhookDeliveries])
  await app.register(runEnvironments, {
    flowTimeoutMs: options.config.flowTimeoutMs,
    flowInlineBudgetMs: options.config.flowInlineBudgetMs,
    flowWorkers: options.config.flowWorkers,
    flowHttp: options.config.flowHttp,
    flowHttpMaxCallsPerRequest: options.config.flowHttpMaxCallsPerRequest,
    dataLimits: options.config.dataLimits,
    gatewayPort: options.config.gatewayPort,
  })
  await app.register(processInstances, { limits: options.config.instanceLimits })
  await app.register(eventsCommitHook)
  await registerInOrder(app, [sessions, processStarter, idempotencyKeys])
  await app.register(idempotentStarts, { ttlHours: options.config.idempotencyTtlHours })
  // Repositories of issue 5 (notes, tasks, headless, queries, constants, data, files).
  await registerInOrder(app, [processQueries, constants, dataCollections, batchJobs, schedules])
  await app.register(batchWorker, {
    settings: {
      backoffMs: options.config.batchBackoffMs,
      pollMs: options.config.batchPollMs,
      leaseMs: options.config.batchLeaseMs,
      retentionMs: options.config.batchRetentionHours * 3_600_000,
      concurrency: BATCH_CONCURRENCY,
    },
  })
  await app.register(scheduler, { pollMs: options.config.batchPollMs })
  await app.register(webhookWorker, {
    ...options.config.webhooks,
    pollMs: options.config.batchPollMs,
    leaseMs: options.config.batchLeaseMs,
    concurrency: BATCH_CONCURRENCY,
    retentionMs: options.config.batchRetentionHours * 3_600_000,
    gatewayPort: options.config.gatewayPort,
  })
  await app.register(engineTelemetry, { rawStore: options.store })
  await registerInOrder(app, [headlessTasks, stepChanges, functionRuns])
  await app.register(scheduledRuns)
  await app.register(escalations)
  await app.register(migrations)
  await app.register(processControl)
  await app.register(bulkOperations)

  await app.register(health)
  await app.register(readiness)
  await app.register(contextRoutes)
  await app.register(actionRoutes)
  await app.register(processRoutes)
  await app.register(controlRoutes)
  await app.register(notificationRoutes)
  await app.register(engineLogRoutes, { ring: options.logRings.wfm, heartbeatMs: options.config.logHeartbeatMs })
  await app.register(batchRoutes)
  await app.register(bulkRoutes)
  await app.register(noteRoutes)
  await app.register(taskRoutes)
  await registerInOrder(app, [headlessTaskRoutes, changeStepRoutes, functionRoutes])
  await app.register(migrationRoutes)
  await app.register(queryRoutes)
  await app.register(constantRoutes)
  await app.register(dataRoutes, { limits: options.config.dataLimits })
  await app.register(fileRoutes, { maxUploadBytes: options.config.maxUploadBytes })
}
