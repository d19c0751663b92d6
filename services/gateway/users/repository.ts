/**
 * The users store (`users` collection, shared with the engine's identity plugin, which reads users
 * by `userId`). `fullNameKey`, the case-folded full name, carries a unique index per tenant: of two
 * concurrent creates with the same name in one tenant only one can be stored.
 */
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Filter, Store } from '../../../store/port.js'
import { Collections, type StoredUser } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    userRepository: UserRepository
  }
}

/** The tenant a request names (each part applied when given). */
export interface TenantScope {
  organizationId?: string | undefined
  appId?: string | undefined
}

/** The unique index of full names within a tenant. */
export const TENANT_FULL_NAME_INDEX = 'users_tenant_full_name'

/** A stored user: as created (StoredUser), or as an update left it (only `userId` is sure). */
export type UserDocument = Partial<StoredUser> & Pick<StoredUser, 'userId'>

/** What a user record shows: the stored document without the store's own fields. */
const USER_PROJECTION = { _id: 0, fullNameKey: 0 } as const

/** Case-insensitive comparison key of a full name ("Ada Lovelace" and "ADA LOVELACE" are one name). */
export function fullNameKey(fullName: string): string {
  return fullName.normalize('NFC').toLowerCase()
}

export function tenantFilter(scope: TenantScope): Filter {
  return {
    ...(scope.organizationId === undefined ? {} : { organizationId: scope.organizationId }),
    ...(scope.appId === undefined ? {} : { appId: scope.appId }),
  }
}

export class UserRepository {
  constructor(private readonly collection: Collection<UserDocument>) {}

  async ensureIndexes(): Promise<void> {
    await this.collection.createIndex({ userId: 1 }, { unique: true })
    // Unique per tenant (organization and app), so a create never tells whether another tenant has
    // the name. Partial: a user whose name another already holds (an update may do that) has no key.
    await this.collection.createIndex(
      { organizationId: 1, appId: 1, fullNameKey: 1 },
      { unique: true, name: TENANT_FULL_NAME_INDEX, partialFilterExpression: { fullNameKey: { $exists: true } } },
    )
    await this.collection.createIndex({ organizationId: 1, appId: 1 })
  }

  /** Rejects with the store's duplicate-key error when the name is taken. */
  async insert(user: UserDocument): Promise<void> {
    await this.collection.insertOne({ ...user })
  }

  /** Replaces the user with `user.userId`; false when there is none. */
  async replace(user: UserDocument): Promise<boolean> {
    const result = await this.collection.replaceOne({ userId: user.userId }, user)
    return result.matchedCount === 1
  }

  async delete(userId: string, scope: TenantScope): Promise<boolean> {
    const result = await this.collection.deleteOne({ userId, ...tenantFilter(scope) })
    return result.deletedCount === 1
  }

  async findById(userId: string, scope: TenantScope): Promise<UserDocument | null> {
    return this.collection.findOne({ userId, ...tenantFilter(scope) }, { projection: USER_PROJECTION })
  }

  async list(scope: TenantScope): Promise<UserDocument[]> {
    return this.collection.find(tenantFilter(scope), { sort: { fullName: 1 }, projection: USER_PROJECTION }).toArray()
  }
}

export function userRepository(store: Store): UserRepository {
  return new UserRepository(store.collection<UserDocument>(Collections.users))
}

export default repositoryPlugin('userRepository', ({ store }) => userRepository(store), { name: 'user-repository' })
