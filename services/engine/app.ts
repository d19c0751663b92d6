/**
 * The engine as one Fastify plugin: service-base first (store, clock, errors, correlation, traces,
 * metrics, docs, caches, identity), then the engine's repositories, services, workers and routes,
 * each registered after the plugins it declares it needs (plugins/service-base/plugin-order.ts).
 * Only the server files build Fastify itself; tests register this plugin and drive it with inject
 * or a real port.
 */
import type { FastifyInstance } from 'fastify'
import { type EngineErrorCode, engineErrorCatalogue } from '../../openapi/generated/errors.js'
import type { Config } from '../../lib/config/config.js'
import { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import type { GenericErrorCodes } from '../../plugins/errors/plugin.js'
import type { Clock } from '../../plugins/clock/plugin.js'
import type { IdentityCodes } from '../../plugins/identity/codes.js'
import serviceBase from '../../plugins/service-base/plugin.js'
import { listed, registerInDependencyOrder } from '../../plugins/service-base/plugin-order.js'
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
import instancePurge from './lifecycle/purge.js'
import purgeRoutes from './lifecycle/purge-routes.js'
import historyRetention from './lifecycle/history-retention.js'
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
import externalTaskRepository from './external-tasks/repository.js'
import externalTasks from './external-tasks/service.js'
import externalTaskRoutes from './external-tasks/routes.js'
import messages from './waits/messages/repository.js'
import messageRoutes from './waits/messages/routes.js'
import waits from './waits/plugin.js'

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

export default async function engineApp(app: FastifyInstance, options: EngineAppOptions): Promise<void> {
  const { config } = options
  const { telemetry } = config
  const metrics = telemetry.metricsEnabled ? new EngineMetrics() : null
  const tracing = await Tracing.create(telemetry, ENGINE_SERVICE_NAME)
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
      exposeStack: config.development,
    },
    jsonDepth: { maxDepth: config.maxJsonDepth, code: 'wm4002' satisfies EngineErrorCode },
    docs: { document: loadOpenApiDocument('engine') },
    caches: { target: 'wfm', types: ['app', 'service', 'users', 'webhookSubscriptions'], pollMs: config.cachePollMs },
    identity: {
      auth: config.auth,
      codes: { unknownUser: 'wm4010', unauthenticated: 'wm4011', forbidden: 'wm4032' } satisfies IdentityCodes<EngineErrorCode>,
    },
  })
  const retentionMs = config.batchRetentionHours * 3_600_000
  // Each plugin names what it needs (fastify-plugin's `dependencies`); the order follows from that.
  await registerInDependencyOrder(app, [
    // Repositories and the services of instances, models, tasks and their events.
    listed(models),
    listed(contexts),
    listed(activities),
    listed(taskLocks, { ttlSeconds: config.lockTtlSeconds }),
    listed(notificationRecords),
    listed(swimlaneMembers),
    listed(processModels),
    listed(authorization),
    listed(notifications),
    // Webhooks: the outbox (a stored change's deliveries, written with it) and the deliveries as the worker tries them.
    listed(webhookOutbox),
    listed(webhookDeliveries),
    listed(runEnvironments, {
      flowTimeoutMs: config.flowTimeoutMs,
      flowInlineBudgetMs: config.flowInlineBudgetMs,
      flowWorkers: config.flowWorkers,
      flowHttp: config.flowHttp,
      flowHttpMaxCallsPerRequest: config.flowHttpMaxCallsPerRequest,
      dataLimits: config.dataLimits,
      gatewayPort: config.gatewayPort,
    }),
    listed(processInstances, { limits: config.instanceLimits }),
    listed(eventsCommitHook),
    listed(sessions),
    listed(processStarter),
    listed(idempotencyKeys),
    listed(idempotentStarts, { ttlHours: config.idempotencyTtlHours }),
    // Queries, constants, data collections; batch jobs, schedules and the workers that run them.
    listed(processQueries),
    listed(dataCollections),
    listed(batchJobs),
    listed(schedules),
    listed(batchWorker, {
      settings: {
        backoffMs: config.batchBackoffMs,
        pollMs: config.batchPollMs,
        leaseMs: config.batchLeaseMs,
        retentionMs,
        concurrency: BATCH_CONCURRENCY,
      },
    }),
    listed(scheduler, { pollMs: config.batchPollMs }),
    listed(webhookWorker, {
      ...config.webhooks,
      pollMs: config.batchPollMs,
      leaseMs: config.batchLeaseMs,
      concurrency: BATCH_CONCURRENCY,
      retentionMs,
      gatewayPort: config.gatewayPort,
    }),
    listed(engineTelemetry, { rawStore: options.store }),
    // The services of the lifecycle: headless tasks, step changes, functions, escalations, migration, control, bulk, purge.
    listed(headlessTasks),
    listed(stepChanges),
    listed(functionRuns),
    listed(scheduledRuns),
    listed(escalations, { pollMs: config.batchPollMs }),
    // Threads waiting for time, messages and child instances (after process control, which cancels children).
    listed(messages),
    listed(waits),
    listed(migrations),
    listed(processControl),
    listed(bulkOperations),
    listed(instancePurge),
    listed(historyRetention, { days: config.historyRetentionDays, pollMs: config.batchPollMs }),
    listed(externalTaskRepository),
    listed(externalTasks, { pollMs: config.externalTaskPollMs }),
    // Routes.
    listed(health),
    listed(messageRoutes),
    listed(readiness),
    listed(contextRoutes),
    listed(actionRoutes),
    listed(processRoutes),
    listed(controlRoutes),
    listed(notificationRoutes),
    listed(engineLogRoutes, { ring: options.logRings.wfm, heartbeatMs: config.logHeartbeatMs }),
    listed(batchRoutes),
    listed(bulkRoutes),
    listed(purgeRoutes),
    listed(noteRoutes),
    listed(taskRoutes),
    listed(headlessTaskRoutes),
    listed(changeStepRoutes),
    listed(functionRoutes),
    listed(migrationRoutes),
    listed(queryRoutes),
    listed(constantRoutes),
    listed(dataRoutes, { limits: config.dataLimits }),
    listed(fileRoutes, { maxUploadBytes: config.maxUploadBytes }),
    listed(externalTaskRoutes),
  ])
}
