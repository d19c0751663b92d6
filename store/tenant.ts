/**
 * The tenant is the pair organizationId + appId: two organizations may each have an app `hr`, and
 * nothing of one may be found, replaced or evicted through the other. Every stored key, physical
 * collection name and cache key that names a tenant is built here, from both parts, so no caller
 * strings an app id alone into a key.
 */
import { createHash } from 'node:crypto'

export interface Tenant {
  readonly organizationId: string
  readonly appId: string
}

/** The tenant's part of a store filter: both fields, always. */
export function tenantFilter(tenant: Tenant): { organizationId: string; appId: string } {
  return { organizationId: tenant.organizationId, appId: tenant.appId }
}

/**
 * The one string form of a tenant: `<organizationId>/<appId>`, each part URI-encoded, so neither a
 * `/` nor a `:` inside an id can make two tenants' keys (or the ids built on them) collide.
 */
export function tenantKey(tenant: Tenant): string {
  return `${encodeURIComponent(tenant.organizationId)}/${encodeURIComponent(tenant.appId)}`
}

/** The `_id` of a stored constant: `<tenantKey>:<name>`. */
export function constantDocumentId(tenant: Tenant, name: string): string {
  return `${tenantKey(tenant)}:${name}`
}

/** The `_id` of a deployed schedule: `<tenantKey>:<modelID>:<scheduleId>`. */
export function scheduleDocumentId(tenant: Tenant, modelID: string, scheduleId: string): string {
  return `${tenantKey(tenant)}:${modelID}:${scheduleId}`
}

/** A collection-name-safe part: the id itself when it is plain, else a short hash of it. */
function nameSafe(id: string): string {
  return /^[A-Za-z0-9_-]{1,64}$/.test(id) ? id : createHash('sha256').update(id).digest('hex').slice(0, 16)
}

/** What every physical name of a data collection starts with (dataCollectionName). */
const DATA_COLLECTION_PREFIX = 'data.'

/** The physical collection of a tenant's data collection model: `data.<organizationId>.<appId>.<modelID>`. */
export function dataCollectionName(tenant: Tenant, modelID: string): string {
  return `${DATA_COLLECTION_PREFIX}${nameSafe(tenant.organizationId)}.${nameSafe(tenant.appId)}.${modelID}`
}

/** Is this physical collection a tenant's data collection (dataCollectionName)? */
export function isDataCollection(collectionName: string): boolean {
  return collectionName.startsWith(DATA_COLLECTION_PREFIX)
}

/** Does a stored document (which may lack an organizationId, when written before tenants were pairs) belong to the tenant? */
export function belongsTo(document: { organizationId?: string | undefined; appId?: string | undefined }, tenant: Tenant): boolean {
  return document.organizationId === tenant.organizationId && document.appId === tenant.appId
}

/** The modelID a data collection's physical name (dataCollectionName) was made from. */
export function dataCollectionModelId(collectionName: string): string {
  return collectionName.split('.').slice(3).join('.')
}
