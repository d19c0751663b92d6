/**
 * The events of a stored change: what the change tells in the instance's notification record (its
 * `notice`, stored with the instance, whose view the record is: store/notification-records.ts) and
 * the webhook deliveries of its event, written in the change's own atomic batch (a commit hook,
 * instances/commit-hooks.ts), and the delivery worker woken once deliveries were stored.
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
    async fieldsFor({ state, effects, compiled, env, event }) {
      return { notice: await notifications.noticeOf(state, eventTypeAfter(event, effects), compiled, env) }
    },
    async writesFor({ state, effects, event, version, now, started }) {
      const eventType = eventTypeAfter(event, effects)
      const deliveryWrites = await outbox.writesFor({ state, eventType, version, at: now })
      // A new instance has no record stored apart from a change to supersede.
      if (started) return deliveryWrites
      return [...notifications.supersededRecordWrites(state.processInstance.processInstanceId), ...deliveryWrites]
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
