/**
 * Webhook delivery with the engine: the worker polls the outbox once the app is ready, is woken when
 * a stored change brought deliveries, and stops when the app starts closing. Its outbound
 * connections pass the destination rules with WEBHOOK_ALLOWED_HOSTS.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { webhookDestinationGuard } from '../../../../lib/outbound/destination-guard.js'
import { workerOwner } from '../../jobs/batch/plugin.js'
import { WebhookSender } from './sender.js'
import { DeliveryWorker } from './worker.js'

declare module 'fastify' {
  interface FastifyInstance {
    webhookWorker: DeliveryWorker
  }
}

export interface WebhookWorkerPluginOptions {
  allowedHosts: readonly string[]
  timeoutMs: number
  backoffMs: number
  pollMs: number
  leaseMs: number
  concurrency: number
  retentionMs: number
  /** The gateway's port when known: never a destination either. */
  gatewayPort: number
}

async function webhookWorkerPlugin(fastify: FastifyInstance, options: WebhookWorkerPluginOptions): Promise<void> {
  const dispatcher = webhookDestinationGuard(options.allowedHosts, fastify.server, options.gatewayPort).dispatcher()
  const worker = new DeliveryWorker({
    deliveries: fastify.webhookDeliveries,
    subscriptions: { find: (subscriptionId) => fastify.webhookOutbox.findSubscription(subscriptionId) },
    sender: new WebhookSender({ dispatcher, timeoutMs: options.timeoutMs }),
    settings: {
      backoffMs: options.backoffMs,
      timeoutMs: options.timeoutMs,
      pollMs: options.pollMs,
      leaseMs: options.leaseMs,
      concurrency: options.concurrency,
      retentionMs: options.retentionMs,
    },
    owner: workerOwner(),
    log: fastify.log.child({ component: 'webhook-worker' }),
    now: fastify.clock,
  })
  fastify.webhookOutbox.onStored(() => worker.wake())
  fastify.decorate('webhookWorker', worker)
  fastify.addHook('onReady', async () => {
    worker.start()
  })
  fastify.addHook('preClose', async () => {
    await worker.stop()
  })
  fastify.addHook('onClose', async () => {
    await dispatcher.close()
  })
}

export default fp(webhookWorkerPlugin, { name: 'webhook-worker', dependencies: ['webhook-outbox', 'webhook-deliveries', 'store', 'clock'] })
