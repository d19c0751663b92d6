/**
 * The events of a stored change: the instance's notification record and the webhook deliveries of
 * its event, written in the change's own atomic batch (a commit hook, instances/commit-hooks.ts),
 * and the delivery worker woken once deliveries were stored.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { Collections } from '../../../store/collections.js'
import type { CommitHook } from '../instances/commit-hooks.js'
import { eventTypeAfter, type Notifications } from './notifications/service.js'
import type { WebhookOutbox } from './webhooks/outbox.js'

export function eventsCommitHook(notifications: Notifications, outbox: WebhookOutbox): CommitHook {
  return {
    name: 'events',
    async writesFor({ state, effects, compiled, env, event, version, now }) {
      const eventType = eventTypeAfter(event, effects)
      const notificationWrites = await notifications.writesFor(state, eventType, compiled, env)
      const deliveryWrites = await outbox.writesFor({ state, eventType, version, at: now })
      return [...notificationWrites, ...deliveryWrites]
    },
    stored(_change, writes) {
      if (writes.some((write) => write.collection === Collections.webhookDeliveries)) outbox.stored()
    },
  }
}

async function eventsCommitHookPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.processInstances.addCommitHook(eventsCommitHook(fastify.notifications, fastify.webhookOutbox))
}

export default fp(eventsCommitHookPlugin, {
  name: 'events-commit-hook',
  dependencies: ['process-instances', 'notifications-service', 'webhook-outbox'],
})
