/**
 * Version 1 → 2: the tenant becomes the pair organizationId + appId in every key (store/tenant.ts).
 * A version-1 store keyed constants (`<appId>:<name>`), schedules (`<appId>:<modelID>:<scheduleId>`),
 * scheduled-run keys and physical data collections (`data.<appId>.<modelID>`) by the app alone, had
 * unique indexes without the organization (model versions, data collection names, user full names),
 * and may hold models, constants, data collections, schedules and batch jobs without an
 * organizationId.
 *
 * A document without an organizationId takes its model's; a model without one takes the only
 * organization that uses its app id (among users, process instances and models that name one).
 * When no organization or several use the app, the document is left as it was (and a warning logs
 * how many): no tenant sees it until it is deployed again with its organization (docs/upgrading.md).
 *
 * Each step is re-runnable: a document is written under its new key before the old one is removed,
 * and a data collection's documents are copied (upserted by `_id`) before the old collection is
 * emptied and the registry entry is pointed at the new one.
 */
import {
  Collections,
  type StoredBatchJob,
  type StoredConstant,
  type StoredDataCollection,
  type StoredModel,
  type StoredSchedule,
} from '../collections.js'
import type { StoreLogger } from '../logger.js'
import { type Document, isDuplicateKeyError, type Store } from '../port.js'
import { constantDocumentId, dataCollectionName, scheduleDocumentId, type Tenant } from '../tenant.js'
import type { MigrationStep } from './migrate.js'

/** A document written before the organization was part of every key. */
type Unmigrated<T extends { organizationId: string }> = Omit<T, 'organizationId'> & { organizationId?: string }

/** The indexes version 1 created that key by the app alone, replaced by their tenant-pair twins. */
export const REPLACED_INDEXES: ReadonlyArray<{ collection: string; name: string }> = [
  { collection: Collections.models, name: 'gateway_model_versions' },
  { collection: Collections.models, name: 'gateway_model_types' },
  { collection: Collections.models, name: 'engine_process_versions' },
  { collection: Collections.constants, name: 'gateway_constants_model' },
  { collection: Collections.dataCollections, name: 'gateway_data_collection_names' },
  { collection: Collections.users, name: 'fullNameKey_1' },
  { collection: Collections.schedules, name: 'engine_schedules_model' },
]

const MISSING = { organizationId: { $exists: false } }

/** Which organization a document without one belongs to. */
class OrganizationOf {
  private constructor(
    private readonly organizationsOfApp: ReadonlyMap<string, ReadonlySet<string>>,
    private readonly organizationOfModel: ReadonlyMap<string, string>,
  ) {}

  static async read(store: Store): Promise<OrganizationOf> {
    const ofApp = new Map<string, Set<string>>()
    const note = (appId: unknown, organizationId: unknown): void => {
      if (typeof appId !== 'string' || typeof organizationId !== 'string' || organizationId === '') return
      const organizations = ofApp.get(appId) ?? new Set<string>()
      organizations.add(organizationId)
      ofApp.set(appId, organizations)
    }
    for (const name of [Collections.users, Collections.contexts, Collections.models]) {
      const pairs = await store
        .collection(name)
        .aggregate<{ _id: { appId?: unknown; organizationId?: unknown } }>([
          { $group: { _id: { appId: '$appId', organizationId: '$organizationId' } } },
        ])
        .toArray()
      for (const { _id } of pairs) note(_id.appId, _id.organizationId)
    }
    const ofModel = new Map<string, string>()
    const models = await store
      .collection<StoredModel>(Collections.models)
      .find({ organizationId: { $exists: true } }, { projection: { appId: 1, modelID: 1, organizationId: 1 } })
      .toArray()
    for (const model of models) ofModel.set(modelKey(model.appId, model.modelID), model.organizationId)
    return new OrganizationOf(ofApp, ofModel)
  }

  /** The only organization that uses the app, or undefined (none, or several). */
  app(appId: string): string | undefined {
    const organizations = this.organizationsOfApp.get(appId)
    return organizations?.size === 1 ? [...organizations][0] : undefined
  }

  /** A model's organization: its own, else its app's only one. */
  model(appId: string, modelID: string): string | undefined {
    return this.organizationOfModel.get(modelKey(appId, modelID)) ?? this.app(appId)
  }

  /** The tenant of a document: its own organization, else its model's, else its app's only one. */
  tenantOf(document: { appId: string; organizationId?: string | undefined }, modelID?: string): Tenant | undefined {
    const organizationId =
      document.organizationId ?? (modelID === undefined ? this.app(document.appId) : this.model(document.appId, modelID))
    return organizationId === undefined ? undefined : { organizationId, appId: document.appId }
  }
}

function modelKey(appId: string, modelID: string): string {
  return JSON.stringify([appId, modelID])
}

function warnUnresolved(log: StoreLogger, what: string, appIds: readonly string[]): void {
  if (appIds.length > 0)
    log.warn(
      { what, count: appIds.length, appIds: [...new Set(appIds)].sort() },
      'left without an organization: no single organization uses their app (deploy them again with organizationId)',
    )
}

/** Models without an organization take their app's only one. */
async function modelOrganizations(store: Store, log: StoreLogger): Promise<void> {
  const models = store.collection<Unmigrated<StoredModel>>(Collections.models)
  const organizations = await OrganizationOf.read(store)
  const apps = new Set((await models.find(MISSING, { projection: { appId: 1 } }).toArray()).map((model) => model.appId))
  const unresolved: string[] = []
  for (const appId of apps) {
    const organizationId = organizations.app(appId)
    if (organizationId === undefined) unresolved.push(appId)
    else await models.updateMany({ appId, ...MISSING }, { $set: { organizationId } })
  }
  warnUnresolved(log, 'models', unresolved)
}

/** A document of version 1 that may lack its organization. */
interface TenantDocument {
  _id?: unknown
  appId: string
  organizationId?: string | undefined
}

/**
 * Runs `migrate` on each document of the collection whose tenant is known (its own organization,
 * else its model's, else its app's only one); warns of those left without one.
 */
async function eachWithTenant<D extends TenantDocument>(
  store: Store,
  log: StoreLogger,
  collection: string,
  modelOf: (document: D) => string | undefined,
  migrate: (document: D, tenant: Tenant) => Promise<void>,
): Promise<void> {
  const organizations = await OrganizationOf.read(store)
  const unresolved: string[] = []
  for (const document of await store.collection<D>(collection).find({}).toArray()) {
    const tenant = organizations.tenantOf(document, modelOf(document))
    if (tenant) await migrate(document, tenant)
    else unresolved.push(document.appId)
  }
  warnUnresolved(log, collection, unresolved)
}

/** Moves each document of the collection to the `_id` its tenant gives it (written first, then the old one removed). */
async function rekey<D extends TenantDocument & { _id: string; modelID: string }>(
  store: Store,
  log: StoreLogger,
  collection: string,
  idOf: (tenant: Tenant, document: D) => string,
): Promise<void> {
  const documents = store.collection<D>(collection)
  await eachWithTenant<D>(
    store,
    log,
    collection,
    (document) => document.modelID,
    async (document, tenant) => {
      const _id = idOf(tenant, document)
      if (document._id === _id && document.organizationId === tenant.organizationId) return
      await documents.replaceOne({ _id }, { ...document, _id, organizationId: tenant.organizationId }, { upsert: true })
      if (document._id !== _id) await documents.deleteOne({ _id: document._id })
    },
  )
}

/** Constants move to `<tenantKey>:<name>`. */
function constantKeys(store: Store, log: StoreLogger): Promise<void> {
  return rekey<Unmigrated<StoredConstant>>(store, log, Collections.constants, (tenant, constant) =>
    constantDocumentId(tenant, constant.name),
  )
}

/** Schedules move to `<tenantKey>:<modelID>:<scheduleId>`. */
function scheduleKeys(store: Store, log: StoreLogger): Promise<void> {
  return rekey<Unmigrated<StoredSchedule>>(store, log, Collections.schedules, (tenant, schedule) =>
    scheduleDocumentId(tenant, schedule.modelID, schedule.scheduleId),
  )
}

/** Each data collection's documents move to `data.<organizationId>.<appId>.<modelID>`, with its model's indexes. */
async function dataCollectionNames(store: Store, log: StoreLogger): Promise<void> {
  const registry = store.collection<Unmigrated<StoredDataCollection>>(Collections.dataCollections)
  await eachWithTenant<Unmigrated<StoredDataCollection>>(
    store,
    log,
    Collections.dataCollections,
    (entry) => entry.modelID,
    async (entry, tenant) => {
      const collectionName = dataCollectionName(tenant, entry.modelID)
      if (entry.collectionName !== collectionName) {
        await createModelIndexes(store, tenant, entry.modelID, collectionName)
        const from = store.collection(entry.collectionName)
        const to = store.collection(collectionName)
        for (const document of await from.find({}).toArray()) await to.replaceOne({ _id: document._id }, document, { upsert: true })
        await from.deleteMany({})
      }
      await registry.updateOne(
        { appId: entry.appId, name: entry.name, modelID: entry.modelID },
        { $set: { organizationId: tenant.organizationId, collectionName } },
      )
    },
  )
}

/** The indexes every version of the data collection model declares, on its new physical collection. */
async function createModelIndexes(store: Store, tenant: Tenant, modelID: string, collectionName: string): Promise<void> {
  const versions = await store
    .collection<StoredModel>(Collections.models)
    .find({ ...tenant, modelID })
    .toArray()
  const target = store.collection<Document>(collectionName)
  for (const model of versions) {
    const indexes = (model.modelBody as { indexes?: Array<{ keys: Record<string, 1 | -1>; unique?: boolean }> }).indexes ?? []
    for (const index of indexes) await target.createIndex(index.keys, { unique: index.unique === true })
  }
}

/** Batch jobs name their organization; a scheduled run's unique key names the tenant. */
async function batchJobTenants(store: Store, log: StoreLogger): Promise<void> {
  const jobs = store.collection<StoredBatchJob>(Collections.batchJobs)
  const modelOf = (job: StoredBatchJob) => (typeof job.payload.modelID === 'string' ? job.payload.modelID : undefined)
  await eachWithTenant<StoredBatchJob>(store, log, Collections.batchJobs, modelOf, async (job, tenant) => {
    const set: Partial<StoredBatchJob> = { organizationId: tenant.organizationId }
    const modelID = modelOf(job)
    const { scheduleId, tick } = job.payload as { scheduleId?: unknown; tick?: unknown }
    if (job.kind === 'scheduledRun' && modelID !== undefined && typeof scheduleId === 'string' && typeof tick === 'string')
      set.scheduleKey = `${scheduleDocumentId(tenant, modelID, scheduleId)}:${tick}`
    if (job.organizationId === set.organizationId && job.scheduleKey === set.scheduleKey) return
    try {
      await jobs.updateOne({ _id: job._id }, { $set: set })
    } catch (error) {
      // Another job already fired that tick under the new key: this one keeps its old key, and the tick runs once.
      if (!isDuplicateKeyError(error)) throw error
      await jobs.updateOne({ _id: job._id }, { $set: { organizationId: tenant.organizationId } })
    }
  })
}

/** The app-only indexes go; each service creates their tenant-pair twins when it starts. */
async function replacedIndexes(store: Store): Promise<void> {
  for (const { collection, name } of REPLACED_INDEXES) await store.collection(collection).dropIndex(name)
}

export const TENANT_PAIR_STEPS: readonly MigrationStep[] = [
  // The old unique indexes go first: documents re-keyed later must not collide with them.
  { name: 'drop app-only indexes', run: (store) => replacedIndexes(store) },
  { name: 'models name their organization', run: modelOrganizations },
  { name: 'constants keyed by tenant', run: constantKeys },
  { name: 'data collections named by tenant', run: dataCollectionNames },
  { name: 'schedules keyed by tenant', run: scheduleKeys },
  { name: 'batch jobs name their tenant', run: batchJobTenants },
]
