/**
 * Reads what the gateway's insertModel writes: the live versions of process models, the tenant's
 * function libraries, the data collections its `dataCollection` models registered and the
 * constants its `constants` models hold, always inside one tenant (organization and app). A new instance uses the
 * latest live version of its process; a running one keeps the version it started with.
 */
import { CollectionRepository } from '../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Store } from '../../../store/port.js'
import { Collections, type StoredConstant, type StoredDataCollection, type StoredModel } from '../../../store/collections.js'
import { constantDocumentId, type Tenant, tenantFilter } from '../../../store/tenant.js'
import type { DataCollectionModelBody } from '../../../runtime/types.js'

declare module 'fastify' {
  interface FastifyInstance {
    models: ModelRepository
  }
}

/** The fields of a unique index of a data collection, in its order. */
export type UniqueKey = readonly string[]

export class ModelRepository extends CollectionRepository<StoredModel> {
  /** Named so it never clashes with the indexes the gateway's model domain creates on the same collection. */
  protected readonly indexes = [
    { keys: { processId: 1, organizationId: 1, appId: 1, version: -1 }, name: 'engine_tenant_process_versions' },
  ] as const

  constructor(
    models: Collection<StoredModel>,
    private readonly dataCollections: Collection<StoredDataCollection>,
    private readonly constants: Collection<StoredConstant>,
  ) {
    super(models)
  }

  /**
   * The number of the latest live version, read without the model itself: every new instance asks,
   * and its compiled model is nearly always cached already.
   */
  async latestLiveProcessVersion(tenant: Tenant, processId: string): Promise<number | null> {
    const latest = await this.collection.findOne(
      { processId, ...tenantFilter(tenant), type: 'process', live: true },
      { sort: { version: -1 }, projection: { _id: 0, version: 1 } },
    )
    return latest ? latest.version : null
  }

  async liveProcessVersion(tenant: Tenant, processId: string, version: number): Promise<StoredModel | null> {
    return this.collection.findOne({ processId, ...tenantFilter(tenant), type: 'process', live: true, version })
  }

  /** The apps of the organization that have a live model of this process. */
  async appsWithLiveProcess(organizationId: string, processId: string): Promise<string[]> {
    const models = await this.collection
      .find({ processId, organizationId, type: 'process', live: true }, { projection: { appId: 1 } })
      .toArray()
    return [...new Set(models.map((model) => model.appId))]
  }

  /** The organizations that have a live model of this process in the app. */
  async organizationsWithLiveProcess(appId: string, processId: string): Promise<string[]> {
    const models = await this.collection
      .find({ processId, appId, type: 'process', live: true }, { projection: { organizationId: 1 } })
      .toArray()
    return [...new Set(models.map((model) => model.organizationId))].sort()
  }

  /** The latest live version of each of the tenant's `functions` models. */
  async liveFunctionLibraries(tenant: Tenant): Promise<StoredModel[]> {
    const versions = await this.collection
      .find({ ...tenantFilter(tenant), type: 'functions', live: true }, { sort: { version: -1 } })
      .toArray()
    const latest = new Map<string, StoredModel>()
    for (const model of versions) if (!latest.has(model.modelID)) latest.set(model.modelID, model)
    return [...latest.values()]
  }

  /**
   * The tenant's data collection of that name, as its `dataCollection` model registered it (the
   * gateway's unique `organizationId, appId, name` index on the registry), or null.
   */
  async dataCollection(tenant: Tenant, name: string): Promise<StoredDataCollection | null> {
    return this.dataCollections.findOne({ ...tenantFilter(tenant), name })
  }

  /** The value of the tenant's constant of that name (stored as `<tenantKey>:<name>`, store/tenant.ts), or null. */
  async constantValue(tenant: Tenant, name: string): Promise<string | null> {
    const found = await this.constants.findOne({ _id: constantDocumentId(tenant, name), ...tenantFilter(tenant) })
    return found ? found.value : null
  }

  /** The unique indexes of every version of a `dataCollection` model (a version only ever adds indexes). */
  async uniqueIndexKeys(tenant: Tenant, modelID: string): Promise<UniqueKey[]> {
    const versions = await this.collection
      .find({ ...tenantFilter(tenant), modelID }, { projection: { _id: 0, 'modelBody.indexes': 1 } })
      .toArray()
    const keys = new Map<string, UniqueKey>()
    for (const model of versions) {
      const indexes = (model.modelBody as unknown as DataCollectionModelBody).indexes ?? []
      for (const index of indexes) if (index.unique === true) keys.set(JSON.stringify(Object.keys(index.keys)), Object.keys(index.keys))
    }
    return [...keys.values()]
  }
}

export function modelRepository(store: Store): ModelRepository {
  return new ModelRepository(
    store.collection<StoredModel>(Collections.models),
    store.collection<StoredDataCollection>(Collections.dataCollections),
    store.collection<StoredConstant>(Collections.constants),
  )
}

export default repositoryPlugin('models', ({ store }) => modelRepository(store), { name: 'models-repository' })
