/**
 * Notification records (docs/reference/events.md#notification-records): one per process instance, current as of its latest
 * change, with the event that caused it, the model's `inform` list evaluated on the new state, and
 * the newest open task while one is open. A change stores its notice with the instance, whose view
 * the record is (store/notification-records.ts); `POST /notify/send` stores a record apart. Listing
 * shows a user only the records of instances they may see.
 */
import { decodeCursor as decodePosition, encodeCursor as encodePosition } from '../../../../lib/paging/cursor.js'
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { NotificationEventType } from '../../../../openapi/generated/schemas.js'
import type { EngineErrorCode } from '../../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../../plugins/errors/service-error.js'
import type { AtomicWrite } from '../../../../store/port.js'
import type { Actor } from '../../../../plugins/identity/actor.js'
import type { StoredContext, StoredNotice, StoredNotification } from '../../../../store/collections.js'
import { notificationRecord } from '../../../../store/notification-records.js'
import type { Tenant } from '../../../../store/tenant.js'
import { type Authorization, type Principal, sameTenant, visibleInstancesFilter } from '../../instances/authorization.js'
import { runtimeUserOf, type RunEnvironments } from '../../flow-host/environment.js'
import type { ProcessModels } from '../../models/service.js'
import type { CompiledProcess, InformItem, ProcessState, RunEnvironment, RuntimeEffect } from '../../../../runtime/types.js'
import type { NotificationPosition, NotificationRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    notifications: Notifications
  }
}

export const DEFAULT_PAGE_SIZE = 50

/**
 * The event of a change: `Finished` when it ended the process, `Failed` when a thread failed,
 * else the operation's own event (`Created` stays `Created`: every start is one, docs/reference/statuses.md#notification-event-types).
 */
export function eventTypeAfter(operationEvent: NotificationEventType, effects: readonly RuntimeEffect[]): NotificationEventType {
  if (operationEvent === 'Created') return operationEvent
  if (effects.some((effect) => effect.kind === 'processEnded')) return 'Finished'
  if (effects.some((effect) => effect.kind === 'threadFailed')) return 'Failed'
  return operationEvent
}

export function encodeCursor(position: NotificationPosition): string {
  return encodePosition([position.lastUpdate, position.processInstanceId])
}

/** The position a cursor names, or undefined when it is not one this service issued. */
export function decodeCursor(cursor: string): NotificationPosition | undefined {
  const parts = decodePosition(cursor, 2)
  return parts && { lastUpdate: parts[0] as string, processInstanceId: parts[1] as string }
}

export interface NotificationPage {
  records: StoredNotification[]
  /** Present when more records follow: pass it as `cursor` to get them. */
  nextCursor?: string
}

export class Notifications {
  constructor(
    private readonly repository: NotificationRepository,
    private readonly fail: ErrorFactory<EngineErrorCode>,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * What a change about to be stored tells in the instance's record, stored with the instance: the
   * record is then the instance's view (store/notification-records.ts).
   */
  async noticeOf(
    state: ProcessState,
    eventType: NotificationEventType,
    compiled: CompiledProcess,
    env: RunEnvironment,
  ): Promise<StoredNotice> {
    return { eventType, informList: await this.informList(state, compiled, env), lastUpdate: state.processInstance.lastUpdate }
  }

  /** The write of a change that removes a record stored apart from an earlier version (its view supersedes it). */
  supersededRecordWrites(processInstanceId: string): AtomicWrite[] {
    return this.repository.supersededRecordWrites(processInstanceId)
  }

  /** Stores the instance's record with `eventType` apart from a change, over the stored instance's `version`. */
  async publish(
    state: ProcessState,
    version: number,
    eventType: NotificationEventType,
    compiled: CompiledProcess,
    env: RunEnvironment,
  ): Promise<StoredNotification> {
    const record = notificationRecord(state, eventType, await this.informList(state, compiled, env))
    await this.repository.store(record, version)
    return record
  }

  /** The records of the app the user may see, newest first, `limit` at a time. */
  async list(principal: Principal, appId: string, limit: number, cursor: string | undefined): Promise<NotificationPage> {
    const after = cursor === undefined ? undefined : decodeCursor(cursor)
    if (cursor !== undefined && !after)
      throw this.fail('wm4000', {
        args: ['querystring.cursor is not a cursor this service issued'],
        parameters: { field: 'querystring.cursor' },
      })
    // Another tenant's app is invisible: nothing to list, not an error.
    if (!sameTenant(principal, { appId, organizationId: principal.organizationId })) return { records: [] }
    const records = await this.repository.page({ appId, ...visibleInstancesFilter(principal) }, limit + 1, after)
    if (records.length <= limit) return { records }
    const page = records.slice(0, limit)
    const last = page[page.length - 1] as StoredNotification
    return { records: page, nextCursor: encodeCursor({ lastUpdate: String(last.processInstance.lastUpdate), processInstanceId: last._id }) }
  }

  /** A model's `inform` that cannot be evaluated on this state leaves the list empty rather than failing the change. */
  private async informList(state: ProcessState, compiled: CompiledProcess, env: RunEnvironment): Promise<InformItem[]> {
    try {
      return await compiled.inform(state, env)
    } catch (error) {
      this.log.warn({ err: error, processInstanceId: state.processInstance.processInstanceId }, 'the inform list could not be evaluated')
      return []
    }
  }
}

async function notificationsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('notifications', new Notifications(fastify.notificationRecords, fastify.fail, fastify.log))
}

export default fp(notificationsPlugin, { name: 'notifications-service', dependencies: ['notifications-repository', 'errors'] })

/** What resending needs of the stored instances (the instances' repository gives it). */
export interface InstanceLookup {
  find(processInstanceId: string): Promise<StoredContext | null>
  findByBusinessKey(tenant: Tenant, processId: string, businessKey: string): Promise<StoredContext | null>
}

export interface ResendDependencies {
  contexts: InstanceLookup
  models: ProcessModels
  environments: RunEnvironments
  notifications: Notifications
  authorization: Authorization
  fail: ErrorFactory<EngineErrorCode>
}

export interface ResendRequest {
  appId: string
  processId: string
  businessKey: string
  processInstanceId?: string | undefined
  eventType: NotificationEventType
}

/**
 * `POST /notify/send`: rewrites the instance's record from its current context with the given
 * event (404 C-3003 when the app has no such instance, or it belongs to another tenant than the
 * user's; 403 wm4030 when the user is not authorized on it).
 */
export async function resendNotification(
  deps: ResendDependencies,
  actor: Actor,
  request: ResendRequest,
  additionalHeaders?: string | string[],
): Promise<void> {
  const stored = request.processInstanceId
    ? await deps.contexts.find(request.processInstanceId)
    : await deps.contexts.findByBusinessKey(
        { organizationId: actor.organizationId, appId: request.appId },
        request.processId,
        request.businessKey,
      )
  const reference = request.processInstanceId ?? `${request.processId} ${request.businessKey}`
  if (!stored || stored.appId !== request.appId || !sameTenant(actor, stored)) {
    throw deps.fail('C-3003', {
      args: [reference],
      parameters: { processInstanceId: request.processInstanceId ?? '', businessKey: request.businessKey },
    })
  }
  deps.authorization.assertAccess(actor, stored.processInstance)
  const compiled = await deps.models.ofInstance(stored.processInstance)
  const env = await deps.environments.create({
    actor: runtimeUserOf(actor),
    appId: stored.appId,
    organizationId: stored.organizationId,
    additionalHeaders,
  })
  await deps.notifications.publish(
    { processInstance: stored.processInstance, dataInstance: stored.dataInstance },
    stored.version,
    request.eventType,
    compiled,
    env,
  )
}
