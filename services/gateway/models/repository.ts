/**
 * The models store and what a model insert writes beside it: `models` (StoredModel: every live
 * version, plus at most one draft per model id), `constants`, `dataCollections` with their physical
 * collections, and the `deploy` batch job of a jobScheduler model.
 */
import { randomUUID } from 'node:crypto'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Store } from '../../../store/port.js'
import {
  Collections,
  type StoredBatchJob,
  type StoredConstant,
  type StoredDataCollection,
  type StoredModel,
} from '../../../store/collections.js'
import { type Tenant, tenantFilter } from '../../../store/tenant.js'

declare module 'fastify' {
  interface FastifyInstance {
    modelRepository: ModelRepository
  }
}

/** Newest first: the latest live version before any draft (a draft has version 0, live ones 1 and up). */
const SERVED_ORDER = { live: -1, version: -1 } as const

export { dataCollectionName } from '../../../store/tenant.js'

/** The stored fields that say which model version a document is, within its tenant. */
type ModelVersionKey = Pick<StoredModel, 'organizationId' | 'appId' | 'modelID' | 'live' | 'version'>

/** The collections a model insert writes, typed by what they hold: the repository's, and what tests read back. */
export function modelCollections(store: Store) {
  return {
    models: store.collection<StoredModel>(Collections.models),
    constants: store.collection<StoredConstant>(Collections.constants),
    dataCollections: store.collection<StoredDataCollection>(Collections.dataCollections),
    batchJobs: store.collection<StoredBatchJob>(Collections.batchJobs),
  }
}

export class ModelRepository {
  private readonly models: Collection<StoredModel>
  private readonly constants: Collection<StoredConstant>
  private readonly dataCollections: Collection<StoredDataCollection>
  private readonly batchJobs: Collection<StoredBatchJob>

  constructor(private readonly store: Store) {
    const { models, constants, dataCollections, batchJobs } = modelCollections(store)
    this.models = models
    this.constants = constants
    this.dataCollections = dataCollections
    this.batchJobs = batchJobs
  }

  async ensureIndexes(): Promise<void> {
    // One document per live version and one draft (version 0) per model id of a tenant: a concurrent
    // insert of the same version fails, and the inserter takes the next one.
    await this.models.createIndex(
      { organizationId: 1, appId: 1, modelID: 1, live: 1, version: 1 },
      { unique: true, name: 'gateway_tenant_model_versions' },
    )
    await this.models.createIndex({ organizationId: 1, appId: 1, type: 1, live: 1 }, { name: 'gateway_tenant_model_types' })
    await this.models.createIndex({ modelID: 1 }, { name: 'gateway_model_ids' })
    await this.constants.createIndex({ organizationId: 1, appId: 1, modelID: 1 }, { name: 'gateway_tenant_constants_model' })
    await this.dataCollections.createIndex(
      { organizationId: 1, appId: 1, name: 1 },
      { unique: true, name: 'gateway_tenant_data_collection_names' },
    )
  }

  async hasModel(tenant: Tenant, modelID: string): Promise<boolean> {
    return (await this.models.findOne({ ...tenantFilter(tenant), modelID }, { projection: { _id: 1 } })) !== null
  }

  async latestLiveVersion(tenant: Tenant, modelID: string): Promise<number> {
    const latest = await this.models.findOne(
      { ...tenantFilter(tenant), modelID, live: true },
      { sort: { version: -1 }, projection: { version: 1 } },
    )
    return latest?.version ?? 0
  }

  /** Rejects with the store's duplicate-key error when that version was stored meanwhile. */
  async insertLive(model: StoredModel): Promise<void> {
    await this.models.insertOne({ ...model })
  }

  async removeVersion(model: ModelVersionKey): Promise<void> {
    await this.models.deleteOne({ ...tenantFilter(model), modelID: model.modelID, live: model.live, version: model.version })
  }

  async draft(tenant: Tenant, modelID: string): Promise<StoredModel | null> {
    return this.models.findOne({ ...tenantFilter(tenant), modelID, live: false }, { projection: { _id: 0 } })
  }

  async upsertDraft(model: StoredModel): Promise<void> {
    await this.models.replaceOne({ ...tenantFilter(model), modelID: model.modelID, live: false }, model, { upsert: true })
  }

  /** The version `getModel` serves: the latest live one, else the draft. */
  async served(tenant: Tenant, modelID: string): Promise<StoredModel | null> {
    return this.models.findOne({ ...tenantFilter(tenant), modelID }, { sort: SERVED_ORDER, projection: { _id: 0 } })
  }

  /** The tenants that have a model with this id. */
  async tenantsWithModel(modelID: string): Promise<Tenant[]> {
    return distinctTenants(await this.models.find({ modelID }, { projection: { organizationId: 1, appId: 1 } }).toArray())
  }

  /** The tenants (of one organization, when given) that have a process model with this processId (live or draft). */
  async tenantsWithProcess(processId: string, organizationId: string | undefined): Promise<Tenant[]> {
    const filter = { processId, type: 'process', ...(organizationId === undefined ? {} : { organizationId }) }
    return distinctTenants(await this.models.find(filter, { projection: { organizationId: 1, appId: 1 } }).toArray())
  }

  /** The organizations that have a model in an app. */
  async organizationsOfApp(appId: string): Promise<string[]> {
    const models = await this.models.find({ appId }, { projection: { organizationId: 1 } }).toArray()
    return [...new Set(models.map((model) => model.organizationId))].sort()
  }

  /** The served version of each model of a type in a tenant, oldest update first. */
  async servedOfType(tenant: Tenant, type: StoredModel['type']): Promise<StoredModel[]> {
    const versions = await this.models
      .find({ ...tenantFilter(tenant), type }, { sort: { modelID: 1, ...SERVED_ORDER }, projection: { _id: 0 } })
      .toArray()
    const served = new Map<string, StoredModel>()
    for (const model of versions) if (!served.has(model.modelID)) served.set(model.modelID, model)
    return [...served.values()].sort((a, b) => a.updateDate.localeCompare(b.updateDate))
  }

  /** The function ids of the tenant's live function libraries (except one being replaced). */
  async liveAppFunctionIds(tenant: Tenant, exceptModelID?: string): Promise<Set<string>> {
    const libraries = await this.models
      .find({ ...tenantFilter(tenant), type: 'functions', live: true }, { sort: { modelID: 1, version: -1 } })
      .toArray()
    const ids = new Set<string>()
    const seen = new Set<string>()
    for (const library of libraries) {
      if (seen.has(library.modelID) || library.modelID === exceptModelID) continue
      seen.add(library.modelID)
      for (const functionId of Object.keys((library.modelBody as { functions?: object }).functions ?? {})) ids.add(functionId)
    }
    return ids
  }

  // ------------------------------------------------------------------------------ side effects

  async constantsOfModel(tenant: Tenant, modelID: string): Promise<StoredConstant[]> {
    return this.constants.find({ ...tenantFilter(tenant), modelID }).toArray()
  }

  async constantsById(ids: string[]): Promise<StoredConstant[]> {
    return this.constants.find({ _id: { $in: ids } }).toArray()
  }

  async putConstant(constant: StoredConstant): Promise<void> {
    await this.constants.replaceOne({ _id: constant._id }, constant, { upsert: true })
  }

  async removeConstant(id: string): Promise<void> {
    await this.constants.deleteOne({ _id: id })
  }

  async dataCollectionsOf(tenant: Tenant, filter: { name?: string; modelID?: string }): Promise<StoredDataCollection[]> {
    return this.dataCollections.find({ ...tenantFilter(tenant), ...filter }, { projection: { _id: 0 } }).toArray()
  }

  async putDataCollection(entry: StoredDataCollection): Promise<void> {
    await this.dataCollections.replaceOne({ ...tenantFilter(entry), name: entry.name }, entry, { upsert: true })
  }

  async removeDataCollection(tenant: Tenant, name: string): Promise<void> {
    await this.dataCollections.deleteOne({ ...tenantFilter(tenant), name })
  }

  /** Creates an index of a data collection's physical collection (which creates the collection). */
  async createDataIndex(collectionName: string, keys: Record<string, 1 | -1>, unique: boolean): Promise<void> {
    await this.store.collection(collectionName).createIndex(keys, { unique })
  }

  /** The `deploy` batch job of a jobScheduler model version (run by the engine's batch worker). */
  async enqueueDeploy(model: Pick<StoredModel, 'appId' | 'organizationId' | 'modelID' | 'version'>, now: Date): Promise<string> {
    const jobId = randomUUID()
    const job: StoredBatchJob = {
      _id: jobId,
      jobId,
      kind: 'deploy',
      status: 'waiting',
      ...tenantFilter(model),
      payload: { modelID: model.modelID, version: model.version },
      tryCount: 0,
      dueAt: now,
      createdAt: now,
      updatedAt: now,
    }
    await this.batchJobs.insertOne(job)
    return jobId
  }

  async removeBatchJob(jobId: string): Promise<void> {
    await this.batchJobs.deleteOne({ jobId })
  }
}

/** Each tenant once, in the order the documents name them. */
function distinctTenants(documents: readonly Tenant[]): Tenant[] {
  const seen = new Map<string, Tenant>()
  for (const { organizationId, appId } of documents) seen.set(JSON.stringify([organizationId, appId]), { organizationId, appId })
  return [...seen.values()]
}

export default repositoryPlugin('modelRepository', ({ store }) => new ModelRepository(store), { name: 'model-repository' })
