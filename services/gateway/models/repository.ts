/**
 * The models store and what a model insert writes beside it: `models` (StoredModel: every live
 * version, plus at most one draft per model id), `constants`, `dataCollections` with their physical
 * collections, and the `deploy` batch job of a jobScheduler model.
 */
import { createHash, randomUUID } from 'node:crypto'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Collection, Store } from '../../../store/port.js'
import {
  Collections,
  type StoredBatchJob,
  type StoredConstant,
  type StoredDataCollection,
  type StoredModel,
} from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    modelRepository: ModelRepository
  }
}

/** Newest first: the latest live version before any draft (a draft has version 0, live ones 1 and up). */
const SERVED_ORDER = { live: -1, version: -1 } as const

/** The physical collection of a data collection model: readable when the app id allows it. */
export function dataCollectionName(appId: string, modelID: string): string {
  const app = /^[A-Za-z0-9_-]{1,64}$/.test(appId) ? appId : createHash('sha256').update(appId).digest('hex').slice(0, 16)
  return `data.${app}.${modelID}`
}

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
    // One document per live version and one draft (version 0) per model id: a concurrent insert of
    // the same version fails, and the inserter takes the next one.
    await this.models.createIndex({ appId: 1, modelID: 1, live: 1, version: 1 }, { unique: true, name: 'gateway_model_versions' })
    await this.models.createIndex({ appId: 1, type: 1, live: 1 }, { name: 'gateway_model_types' })
    await this.models.createIndex({ modelID: 1 }, { name: 'gateway_model_ids' })
    await this.constants.createIndex({ appId: 1, modelID: 1 }, { name: 'gateway_constants_model' })
    await this.dataCollections.createIndex({ appId: 1, name: 1 }, { unique: true, name: 'gateway_data_collection_names' })
  }

  async hasModel(appId: string, modelID: string): Promise<boolean> {
    return (await this.models.findOne({ appId, modelID }, { projection: { _id: 1 } })) !== null
  }

  async latestLiveVersion(appId: string, modelID: string): Promise<number> {
    const latest = await this.models.findOne({ appId, modelID, live: true }, { sort: { version: -1 }, projection: { version: 1 } })
    return latest?.version ?? 0
  }

  /** Rejects with the store's duplicate-key error when that version was stored meanwhile. */
  async insertLive(model: StoredModel): Promise<void> {
    await this.models.insertOne({ ...model })
  }

  async removeVersion(model: Pick<StoredModel, 'appId' | 'modelID' | 'live' | 'version'>): Promise<void> {
    await this.models.deleteOne({ appId: model.appId, modelID: model.modelID, live: model.live, version: model.version })
  }

  async draft(appId: string, modelID: string): Promise<StoredModel | null> {
    return this.models.findOne({ appId, modelID, live: false }, { projection: { _id: 0 } })
  }

  async upsertDraft(model: StoredModel): Promise<void> {
    await this.models.replaceOne({ appId: model.appId, modelID: model.modelID, live: false }, model, { upsert: true })
  }

  /** The version `getModel` serves: the latest live one, else the draft. */
  async served(appId: string, modelID: string): Promise<StoredModel | null> {
    return this.models.findOne({ appId, modelID }, { sort: SERVED_ORDER, projection: { _id: 0 } })
  }

  /** The apps that have a model with this id. */
  async appsWithModel(modelID: string): Promise<string[]> {
    const models = await this.models.find({ modelID }, { projection: { appId: 1 } }).toArray()
    return [...new Set(models.map((model) => model.appId))].sort()
  }

  /** The apps that have a process model with this processId (live or draft). */
  async appsWithProcess(processId: string): Promise<string[]> {
    const models = await this.models.find({ processId, type: 'process' }, { projection: { appId: 1 } }).toArray()
    return [...new Set(models.map((model) => model.appId))].sort()
  }

  /** The served version of each model of a type in an app, oldest update first. */
  async servedOfType(appId: string, type: StoredModel['type']): Promise<StoredModel[]> {
    const versions = await this.models.find({ appId, type }, { sort: { modelID: 1, ...SERVED_ORDER }, projection: { _id: 0 } }).toArray()
    const served = new Map<string, StoredModel>()
    for (const model of versions) if (!served.has(model.modelID)) served.set(model.modelID, model)
    return [...served.values()].sort((a, b) => a.updateDate.localeCompare(b.updateDate))
  }

  /** The function ids of the app's live function libraries (except one being replaced). */
  async liveAppFunctionIds(appId: string, exceptModelID?: string): Promise<Set<string>> {
    const libraries = await this.models.find({ appId, type: 'functions', live: true }, { sort: { modelID: 1, version: -1 } }).toArray()
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

  async constantsOfModel(appId: string, modelID: string): Promise<StoredConstant[]> {
    return this.constants.find({ appId, modelID }).toArray()
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

  async dataCollectionsOf(appId: string, filter: { name?: string; modelID?: string }): Promise<StoredDataCollection[]> {
    return this.dataCollections.find({ appId, ...filter }, { projection: { _id: 0 } }).toArray()
  }

  async putDataCollection(entry: StoredDataCollection): Promise<void> {
    await this.dataCollections.replaceOne({ appId: entry.appId, name: entry.name }, entry, { upsert: true })
  }

  async removeDataCollection(appId: string, name: string): Promise<void> {
    await this.dataCollections.deleteOne({ appId, name })
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
      appId: model.appId,
      ...(model.organizationId === undefined ? {} : { organizationId: model.organizationId }),
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

export default repositoryPlugin('modelRepository', ({ store }) => new ModelRepository(store), { name: 'model-repository' })
