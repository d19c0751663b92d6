/**
 * Test support: users written straight into the users store (the identity plugin resolves the
 * `user` header from there), so engine tests need no gateway.
 */
import { randomUUID } from 'node:crypto'
import { recordInvalidation } from '../../plugins/cache/invalidations.js'
import { USERS_CACHE } from '../../plugins/cache/written-elsewhere.js'
import type { Store } from '../../store/port.js'
import { Collections, type StoredUser } from '../../store/collections.js'

export interface TestUserOptions {
  appId: string
  organizationId: string
  userId?: string
  fullName?: string
  roles?: string[]
  swimlanes?: string[]
  isSystemUser?: boolean
}

export async function createTestUser(store: Store, options: TestUserOptions): Promise<StoredUser> {
  const userId = options.userId ?? randomUUID()
  const fullName = options.fullName ?? `Test user ${userId.slice(0, 8)}`
  const user: StoredUser = {
    userId,
    firstName: fullName.split(' ')[0] ?? fullName,
    lastName: fullName.split(' ').slice(1).join(' '),
    fullName,
    fullNameKey: fullName.toLowerCase(),
    unit: { id: 'unit-1', name: 'Unit one' },
    roles: options.roles ?? ['user'],
    swimlanes: options.swimlanes ?? [],
    isSystemUser: options.isSystemUser ?? false,
    organizationId: options.organizationId,
    appId: options.appId,
  }
  await store.collection<StoredUser>(Collections.users).insertOne({ ...user })
  // As the gateway's user routes do: a service that cached the tenant's users reads them again.
  await recordInvalidation(store, { target: 'all', cacheType: USERS_CACHE })
  return user
}
