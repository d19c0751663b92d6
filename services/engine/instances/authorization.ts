/**
 * Who may see and act on a process instance (docs/reference/identity.md#authorization-on-an-instance),
 * answered in one place: as a predicate for one loaded instance, and as a store filter for queries over many (the two agree; see
 * service.test.ts). Another tenant's instance is invisible (404); one of the tenant that the user
 * is not authorized on is forbidden (403 wm4030).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Actor } from '../../../plugins/identity/actor.js'
import { swimlaneInboxKey, userInboxKey } from '../../../store/context-fields.js'
import type { Filter } from '../../../store/port.js'
import type { ProcessInstance, Task } from '../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    authorization: Authorization
  }
}

export const ADMIN_ROLE = 'admin'

/** The part of an actor authorization looks at. */
export type Principal = Pick<Actor, 'userId' | 'roles' | 'swimlanes' | 'organizationId' | 'appId'> & Partial<Pick<Actor, 'isSystemUser'>>

export type Access = 'granted' | 'otherTenant' | 'notAuthorized'

export function isAdmin(principal: Principal): boolean {
  return principal.roles.includes(ADMIN_ROLE)
}

/**
 * May the user act for others in their tenant (assign tasks, move instances, release another
 * user's locks, start for another initiator, act on a task that is not theirs): an admin of the
 * tenant or a system user (integrations).
 */
export function mayActForOthers(principal: Principal): boolean {
  return isAdmin(principal) || principal.isSystemUser === true
}

export function sameTenant(principal: Principal, instance: Pick<ProcessInstance, 'appId' | 'organizationId'>): boolean {
  return principal.appId === instance.appId && principal.organizationId === instance.organizationId
}

/** Initiator, contributor, assignee or swimlane member of an open task, or admin. */
export function accessTo(principal: Principal, instance: ProcessInstance): Access {
  if (!sameTenant(principal, instance)) return 'otherTenant'
  if (isAdmin(principal) || instance.initiator === principal.userId || instance.contributorUsers.includes(principal.userId))
    return 'granted'
  const concerned = instance.tasks.some(
    (task) => task.status === 'open' && (task.userId === principal.userId || principal.swimlanes.includes(task.swimlane)),
  )
  return concerned ? 'granted' : 'notAuthorized'
}

/**
 * May the user work on this task (complete, save, run its functions, hold its lock): its assignee,
 * a member of its swimlane while it sits in the swimlane's pool, or an admin.
 */
export function mayActOnTask(principal: Principal, task: Task): boolean {
  if (isAdmin(principal)) return true
  return task.userId ? task.userId === principal.userId : principal.swimlanes.includes(task.swimlane)
}

/**
 * A store filter selecting the instances `accessTo` grants, for documents holding the process
 * instance under `prefix` (`processInstance.` in contexts and notifications).
 */
export function visibleInstancesFilter(principal: Principal, prefix = 'processInstance.'): Filter {
  const tenant: Filter = { [`${prefix}appId`]: principal.appId, [`${prefix}organizationId`]: principal.organizationId }
  if (isAdmin(principal)) return tenant
  return {
    ...tenant,
    $or: [
      { [`${prefix}initiator`]: principal.userId },
      { [`${prefix}contributorUsers`]: principal.userId },
      { [`${prefix}tasks`]: { $elemMatch: { status: 'open', userId: principal.userId } } },
      { [`${prefix}tasks`]: { $elemMatch: { status: 'open', swimlane: { $in: principal.swimlanes } } } },
    ],
  }
}

/** The keys of the principal that an instance's `viewers` (store/context-fields.ts) hold when `accessTo` grants a non-admin. */
export function viewerKeysOf(principal: Principal): string[] {
  return [userInboxKey(principal.userId), ...principal.swimlanes.map(swimlaneInboxKey)]
}

/**
 * The same selection as `visibleInstancesFilter`, on the top-level fields of a stored context that
 * the queries' indexes cover (tenant, `viewers`), so a query reads only the instances it may answer.
 */
export function visibleContextsFilter(principal: Principal): Filter {
  const tenant: Filter = { organizationId: principal.organizationId, appId: principal.appId }
  return isAdmin(principal) ? tenant : { ...tenant, viewers: { $in: viewerKeysOf(principal) } }
}

export class Authorization {
  constructor(private readonly fail: ErrorFactory<EngineErrorCode>) {}

  accessTo = accessTo
  mayActOnTask = mayActOnTask
  mayActForOthers = mayActForOthers
  visibleInstancesFilter = visibleInstancesFilter
  visibleContextsFilter = visibleContextsFilter

  /** Throws 404 wm3001 for another tenant's instance, 403 wm4030 when the user is not authorized. */
  assertAccess(principal: Principal, instance: ProcessInstance): void {
    const access = accessTo(principal, instance)
    if (access === 'otherTenant')
      throw this.fail('wm3001', { args: [instance.processInstanceId], parameters: { processInstanceId: instance.processInstanceId } })
    if (access === 'notAuthorized') {
      throw this.fail('wm4030', {
        args: [principal.userId, instance.processInstanceId],
        parameters: { processInstanceId: instance.processInstanceId },
      })
    }
  }

  /** Throws 403 wm4031 unless the user may act for others (`what` names the act). */
  assertMayActForOthers(principal: Principal, what: string): void {
    if (!mayActForOthers(principal)) throw this.fail('wm4031', { args: [principal.userId, what], parameters: { userId: principal.userId } })
  }

  /**
   * Throws 403 wm4030 unless the user may end the task headlessly: authorized on the instance and
   * working on the task, or acting for others. The instance is known to be of the user's tenant.
   */
  assertMayEndTask(principal: Principal, instance: ProcessInstance, task: Task): void {
    if (mayActForOthers(principal) || (accessTo(principal, instance) === 'granted' && mayActOnTask(principal, task))) return
    throw this.fail('wm4030', {
      args: [principal.userId, instance.processInstanceId],
      parameters: { processInstanceId: instance.processInstanceId, taskId: task.taskId },
    })
  }

  /** Throws 403 wm4030 unless the user may work on the task. */
  assertMayActOnTask(principal: Principal, instance: ProcessInstance, task: Task): void {
    if (!mayActOnTask(principal, task)) {
      throw this.fail('wm4030', {
        args: [principal.userId, instance.processInstanceId],
        parameters: { processInstanceId: instance.processInstanceId, taskId: task.taskId },
      })
    }
  }
}

async function authorizationPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('authorization', new Authorization(fastify.fail))
}

export default fp(authorizationPlugin, { name: 'authorization', dependencies: ['errors'] })
