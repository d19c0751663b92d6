/**
 * What forms need to know about the tenant's users: who works in which swimlane (the form
 * context's `swimlanes`, e.g. to pick an assignee).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Collection, Store } from '../../../plugins/store/port.js'
import { Collections, type StoredUser } from '../../shared/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    swimlaneMembers: SwimlaneMemberRepository
  }
}

export class SwimlaneMemberRepository {
  constructor(private readonly users: Collection<StoredUser>) {}

  /** Swimlane id → userIds of the tenant's users who work in it, for each of the given swimlanes. */
  async membersOf(appId: string, organizationId: string, swimlaneIds: readonly string[]): Promise<Record<string, string[]>> {
    const members: Record<string, string[]> = Object.fromEntries(swimlaneIds.map((id) => [id, []]))
    if (swimlaneIds.length === 0) return members
    // With an organization the users' (organizationId, appId) index narrows the read to the tenant;
    // users without one belong to the organization '' (checked below), which an equality cannot say.
    const tenant = organizationId === '' ? { appId } : { organizationId, appId }
    const users = await this.users.find({ ...tenant, swimlanes: { $in: [...swimlaneIds] } }, { projection: { _id: 0, userId: 1, swimlanes: 1, organizationId: 1 } }).toArray()
    for (const user of users) {
      if ((user.organizationId ?? '') !== organizationId) continue
      for (const swimlane of user.swimlanes ?? []) members[swimlane]?.push(user.userId)
    }
    return members
  }
}

export function swimlaneMemberRepository(store: Store): SwimlaneMemberRepository {
  return new SwimlaneMemberRepository(store.collection<StoredUser>(Collections.users))
}

async function swimlaneMembersPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('swimlaneMembers', swimlaneMemberRepository(fastify.store))
}

export default fp(swimlaneMembersPlugin, { name: 'swimlane-members-repository', dependencies: ['store'] })
