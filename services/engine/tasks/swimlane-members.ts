/**
 * What forms need to know about the tenant's users: who works in which swimlane (the form
 * context's `swimlanes`, e.g. to pick an assignee).
 */
import { readThrough } from '../../../plugins/cache/read-through.js'
import type { CacheRegistry } from '../../../plugins/cache/registry.js'
import { USERS_CACHE, WRITTEN_ELSEWHERE_MAX_AGE_MS } from '../../../plugins/cache/written-elsewhere.js'
import { CollectionRepository } from '../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Store } from '../../../store/port.js'
import { Collections, type StoredUser } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    swimlaneMembers: SwimlaneMemberRepository
  }
}

export class SwimlaneMemberRepository extends CollectionRepository<StoredUser> {
  /** Every session lists the members of its swimlanes: read them by swimlane, not the tenant's every user. */
  protected readonly indexes = [{ keys: { appId: 1, swimlanes: 1 }, name: 'engine_swimlane_members' }] as const

  constructor(
    collection: Collection<StoredUser>,
    private readonly caches?: CacheRegistry,
  ) {
    super(collection)
  }

  /**
   * Swimlane id → userIds of the tenant's users who work in it, for each of the given swimlanes.
   * Every session asks, so the answer is kept in the `users` cache, which user writes evict.
   */
  async membersOf(appId: string, organizationId: string, swimlaneIds: readonly string[]): Promise<Record<string, string[]>> {
    if (!this.caches) return this.readMembers(appId, organizationId, swimlaneIds)
    const key = `members:${JSON.stringify([appId, organizationId, swimlaneIds])}`
    const members = await readThrough(this.caches, USERS_CACHE, key, () => this.readMembers(appId, organizationId, swimlaneIds), {
      maxAgeMs: WRITTEN_ELSEWHERE_MAX_AGE_MS,
    })
    // Each session gets its own lists: the cached ones are shared.
    return Object.fromEntries(Object.entries(members).map(([swimlane, userIds]) => [swimlane, [...userIds]]))
  }

  private async readMembers(appId: string, organizationId: string, swimlaneIds: readonly string[]): Promise<Record<string, string[]>> {
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

export function swimlaneMemberRepository(store: Store, caches?: CacheRegistry): SwimlaneMemberRepository {
  return new SwimlaneMemberRepository(store.collection<StoredUser>(Collections.users), caches)
}

export default repositoryPlugin('swimlaneMembers', ({ store, caches }) => swimlaneMemberRepository(store, caches), {
  name: 'swimlane-members-repository',
  dependencies: ['caches'],
})
