/**
 * Runs the scheduler with the engine: adds the `deploy` job handler to the batch worker, polls the
 * stored schedules once the app is ready (reading the due ones from the store on every poll, so
 * schedules survive restarts and ones deployed by other engines fire here too), and stops when the
 * app starts closing. Decorates `fastify.scheduler`.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { deployHandler, Scheduler } from './service.js'

declare module 'fastify' {
  interface FastifyInstance {
    scheduler: Scheduler
  }
}

export interface SchedulerPluginOptions {
  pollMs: number
}

async function schedulerPlugin(fastify: FastifyInstance, options: SchedulerPluginOptions): Promise<void> {
  fastify.batchHandlers.set('deploy', deployHandler(fastify.schedules))
  const scheduler = new Scheduler({
    schedules: fastify.schedules,
    batchJobs: fastify.batchJobs,
    pollMs: options.pollMs,
    log: fastify.log.child({ component: 'scheduler' }),
    // The jobs just fired are due now: run them without waiting for the worker's next poll.
    onFired: (fired) => {
      fastify.engineMetrics?.schedulesFired(fired.length)
      fastify.batchWorker.wake()
    },
    now: fastify.clock,
  })
  fastify.decorate('scheduler', scheduler)
  fastify.addHook('onReady', async () => {
    scheduler.start()
  })
  fastify.addHook('preClose', async () => {
    await scheduler.stop()
  })
}

export default fp(schedulerPlugin, { name: 'scheduler', dependencies: ['schedules', 'batch-jobs', 'batch-worker', 'clock', 'metrics'] })
