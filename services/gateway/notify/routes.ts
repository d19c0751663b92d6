/** `POST /notify`: the gateway's direct notification upsert. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { upsertNotification } from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'

function stringOrUndefined(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined
}

async function notifyRoutes(fastify: FastifyInstance): Promise<void> {
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(upsertNotification),
    handler: async (request, reply) => {
      const { notificationObject } = request.body
      const record: Record<string, unknown> = notificationObject
      const named = {
        organizationId: stringOrUndefined(record.organizationId) ?? request.body.organizationId,
        appId: stringOrUndefined(record.appId) ?? request.body.appId,
      }
      const tenant = fastify.adminTenantOf(request, named, 'body.notificationObject')
      if (tenant) {
        // A tenant admin's upsert neither reaches another tenant's record nor moves one out of its own.
        await fastify.notificationUpserts.assertRecordInTenant(notificationObject.processInstance?.processInstanceId, tenant)
        await fastify.notificationUpserts.upsert({ ...request.body, ...tenant, notificationObject: { ...notificationObject, ...tenant } })
      } else await fastify.notificationUpserts.upsert(request.body)
      return reply.envelope({ message: 'notified' })
    },
  })
}

export default fp(notifyRoutes, { name: 'notify-routes', dependencies: ['notification-upserts', 'envelope', 'identity'] })
