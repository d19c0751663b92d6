/**
 * Feeds the engine's gauges and store metrics that no request moves: batch jobs by status (counted
 * through the status index at each scrape), open tasks (read from the store at start and every few
 * minutes, kept up to date in between), and the embedded store's journal commits. Nothing when
 * metrics are off.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../../../store/port.js'
import { countOpenTasks, OPEN_TASK_RESYNC_MS } from './open-tasks.js'

export interface EngineTelemetryOptions {
  /** The store as opened (the journal is its own; `fastify.store` may be a measuring wrapper). */
  rawStore: Store
}

async function engineTelemetryPlugin(fastify: FastifyInstance, options: EngineTelemetryOptions): Promise<void> {
  const metrics = fastify.engineMetrics
  if (!metrics) return
  metrics.readBatchJobCountsWith(async () => ({ ...(await fastify.batchJobs.countEachStatus()) }))
  options.rawStore.observeJournal?.((seconds, writes) => metrics.journalCommitted(seconds, writes))
  const resync = async (): Promise<void> => {
    try {
      metrics.resetOpenTasks(await countOpenTasks(fastify.store))
    } catch (error) {
      fastify.log.warn({ err: error }, 'open tasks could not be counted for the metrics; the previous counts stay')
    }
  }
  let timer: NodeJS.Timeout | undefined
  fastify.addHook('onReady', async () => {
    await resync()
    timer = setInterval(() => void resync(), OPEN_TASK_RESYNC_MS)
    timer.unref()
  })
  fastify.addHook('onClose', async () => clearInterval(timer))
}

export default fp(engineTelemetryPlugin, { name: 'engine-telemetry', dependencies: ['metrics', 'batch-jobs', 'store'] })
