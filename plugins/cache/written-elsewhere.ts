/**
 * Caches of what the gateway writes and every instance reads on every request
 * (docs/reference/gateway.md#caches): the users (identity, swimlane members) and the webhook
 * subscriptions. Each write through the gateway records an invalidation before it is answered;
 * writes made around the API (a script on the database) record none, so entries also lapse.
 */
import type { Store } from '../../store/port.js'
import { type Tenant, tenantKey } from '../../store/tenant.js'
import { recordInvalidation } from './invalidations.js'
import type { CacheRegistry } from './registry.js'

export const USERS_CACHE = 'users'
export const WEBHOOK_SUBSCRIPTIONS_CACHE = 'webhookSubscriptions'
export const WRITTEN_ELSEWHERE_MAX_AGE_MS = 10_000

/** After a user write: every instance drops its cached users, this one before the write is answered. */
export async function evictUsers(store: Store, caches: CacheRegistry): Promise<void> {
  await recordInvalidation(store, { target: 'all', cacheType: USERS_CACHE })
  await caches.upToDate()
}

/** After a subscription write: the engines drop the tenant's cached subscriptions (all of them when the tenant is not known). */
export async function evictWebhookSubscriptions(store: Store, tenant: Partial<Tenant>): Promise<void> {
  const id = tenant.organizationId !== undefined && tenant.appId !== undefined ? tenantKey(tenant as Tenant) : undefined
  await recordInvalidation(store, { target: 'wfm', cacheType: WEBHOOK_SUBSCRIPTIONS_CACHE, ...(id === undefined ? {} : { id }) })
}
