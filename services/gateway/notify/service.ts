/**
 * `POST /notify` (docs/reference/gateway.md#notification-upsert): upserts the notification record of `processInstance.processInstanceId`
 * with only the fields given. Top-level fields replace theirs; the fields of `processInstance` are
 * merged into the stored one, so its other fields are kept. Field names become store paths, so a
 * name that could reach a prototype (`__proto__`, `constructor`, `prototype`) or be read as an
 * operator or a path (`$…`, `a.b`) is refused at any depth, before anything is written.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { NotifyRequest } from '../../../openapi/generated/schemas.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { NotificationRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    notificationUpserts: NotificationUpserts
  }
}

const PROTOTYPE_KEYS = new Set(['__proto__', 'constructor', 'prototype'])
const FIELD = 'body.notificationObject'

/** The path of the first field name that must not be stored, or undefined. */
export function unsafeFieldName(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined
  for (const [key, child] of Object.entries(value)) {
    if (PROTOTYPE_KEYS.has(key) || key.startsWith('$') || key.includes('.') || key === '') return `${path}.${key}`
    const nested = unsafeFieldName(child, Array.isArray(value) ? `${path}[${key}]` : `${path}.${key}`)
    if (nested !== undefined) return nested
  }
  return undefined
}

export class NotificationUpserts {
  constructor(
    private readonly repository: NotificationRepository,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
  ) {}

  /** 403 when the record of `processInstanceId` exists and belongs to another tenant than `tenant`. */
  async assertRecordInTenant(processInstanceId: string | undefined, tenant: { organizationId: string; appId: string }): Promise<void> {
    if (typeof processInstanceId !== 'string' || processInstanceId === '') return
    const existing = (await this.repository.find(processInstanceId)) as { organizationId?: unknown; appId?: unknown } | null
    if (existing && (existing.organizationId !== tenant.organizationId || existing.appId !== tenant.appId)) {
      throw this.fail('fm4030', {
        args: ["a tenant admin changes only its own tenant's notification records"],
        parameters: { field: `${FIELD}.processInstance.processInstanceId` },
      })
    }
  }

  async upsert(request: NotifyRequest): Promise<void> {
    const { notificationObject } = request
    const processInstanceId = notificationObject.processInstance?.processInstanceId
    if (typeof processInstanceId !== 'string' || processInstanceId === '')
      throw this.fail('wm3019', { parameters: { field: `${FIELD}.processInstance.processInstanceId` } })
    const unsafe = unsafeFieldName(notificationObject, FIELD)
    if (unsafe !== undefined) throw this.fail('fm4000', { args: [`${unsafe} is not an allowed field name`], parameters: { field: unsafe } })
    if ('_id' in notificationObject)
      throw this.fail('fm4000', { args: [`${FIELD}._id cannot be set`], parameters: { field: `${FIELD}._id` } })

    const fields: Record<string, unknown> = {}
    for (const [key, value] of Object.entries(notificationObject)) {
      if (key !== 'processInstance') fields[key] = value
    }
    for (const [key, value] of Object.entries(notificationObject.processInstance ?? {})) fields[`processInstance.${key}`] = value
    // The tenant injected by the client library, unless the record names its own.
    if (fields.appId === undefined && request.appId !== undefined) fields.appId = request.appId
    if (fields.organizationId === undefined && request.organizationId !== undefined) fields.organizationId = request.organizationId
    await this.repository.upsertFields(processInstanceId, fields)
  }
}

async function notificationUpsertsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('notificationUpserts', new NotificationUpserts(fastify.notificationRepository, fastify.fail))
}

export default fp(notificationUpsertsPlugin, { name: 'notification-upserts', dependencies: ['notification-upsert-repository', 'errors'] })
