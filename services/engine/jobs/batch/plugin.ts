/**
 * Runs the batch worker with the engine: decorates `fastify.batchHandlers` (plugins registered
 * after this one add a handler per job kind) and `fastify.batchWorker`, starts polling once the app
 * is ready and stops when it starts closing.
 */
import { randomUUID } from 'node:crypto'
import { hostname } from 'node:os'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { BatchJobHandlers } from './handlers.js'
import { BatchWorker, type BatchWorkerSettings } from './worker.js'

declare module 'fastify' {
  interface FastifyInstance {
    batchHandlers: BatchJobHandlers
    batchWorker: BatchWorker
  }
}

export interface BatchWorkerPluginOptions {
  settings: BatchWorkerSettings
}

/** Unique per engine app, so two engines in one process (tests, all-in-one) hold separate leases. */
export function workerOwner(): string {
  return `${hostname()}/${process.pid}/${randomUUID()}`
}

async function batchWorkerPlugin(fastify: FastifyInstance, options: BatchWorkerPluginOptions): Promise<void> {
  const handlers: BatchJobHandlers = new Map()
  const worker = new BatchWorker({
    repository: fastify.batchJobs,
    handlers,
    settings: options.settings,
    owner: workerOwner(),
    log: fastify.log.child({ component: 'batch-worker' }),
    now: fastify.clock,
  })
  fastify.decorate('batchHandlers', handlers)
  fastify.decorate('batchWorker', worker)
  fastify.addHook('onReady', async () => {
    worker.start()
  })
  // preClose: before any onClose hook releases what a running handler still uses.
  fastify.addHook('preClose', async () => {
    await worker.stop()
  })
}

export default fp(batchWorkerPlugin, { name: 'batch-worker', dependencies: ['batch-jobs', 'clock'] })
