/**
 * What forms need to know about the tenant's users: who works in which swimlane (the form
 * context's `swimlanes`, e.g. to pick an assignee).
 */
import { CollectionRepository } from '../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Store } from '../../../store/port.js'
import { Collections, type StoredUser } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    swimlaneMembers: SwimlaneMemberRepository
  }
}

export class SwimlaneMemberRepository extends CollectionRepository<StoredUser> {
  /** Every session lists the members of its swimlanes: read them by swimlane, not the tenant's every user. */
  protected readonly indexes = [{ keys: { appId: 1, swimlanes: 1 }, name: 'engine_swimlane_members' }] as const

  /** Swimlane id → userIds of the tenant's users who work in it, for each of the given swimlanes. */
  async membersOf(appId: string, organizationId: string, swimlaneIds: readonly string[]): Promise<Record<string, string[]>> {
    const members: Record<string, string[]> = Object.fromEntries(swimlaneIds.map((id) => [id, []]))
    if (swimlaneIds.length === 0) return members
    // The (appId, swimlanes) index reads only the members; users without an organization belong to
    // the organization '' (checked below), which an equality on organizationId cannot say.
    const users = await this.collection
      .find({ appId, swimlanes: { $in: [...swimlaneIds] } }, { projection: { _id: 0, userId: 1, swimlanes: 1, organizationId: 1 } })
      .toArray()
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

export default repositoryPlugin('swimlaneMembers', ({ store }) => swimlaneMemberRepository(store), { name: 'swimlane-members-repository' })
