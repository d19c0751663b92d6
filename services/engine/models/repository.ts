/**
 * Reads the `models` collection (written by the gateway's insertModel): the live versions of
 * process models and the app's function libraries. A new instance uses the latest live version of
 * its process; a running one keeps the version it started with.
 */
import { CollectionRepository } from '../../../plugins/store/collection-repository.js'
import { repositoryPlugin } from '../../../plugins/store/repository-plugin.js'
import type { Store } from '../../../store/port.js'
import { Collections, type StoredModel } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    models: ModelRepository
  }
}

export class ModelRepository extends CollectionRepository<StoredModel> {
  /** Named so it never clashes with the indexes the gateway's model domain creates on the same collection. */
  protected readonly indexes = [{ keys: { processId: 1, appId: 1, version: -1 }, name: 'engine_process_versions' }] as const

  /**
   * The number of the latest live version, read without the model itself: every new instance asks,
   * and its compiled model is nearly always cached already.
   */
  async latestLiveProcessVersion(appId: string, processId: string): Promise<number | null> {
    const latest = await this.collection.findOne(
      { processId, appId, type: 'process', live: true },
      { sort: { version: -1 }, projection: { _id: 0, version: 1 } },
    )
    return latest ? latest.version : null
  }

  async liveProcessVersion(appId: string, processId: string, version: number): Promise<StoredModel | null> {
    return this.collection.findOne({ processId, appId, type: 'process', live: true, version })
  }

  /** The apps that have a live model of this process. */
  async appsWithLiveProcess(processId: string): Promise<string[]> {
    const models = await this.collection.find({ processId, type: 'process', live: true }, { projection: { appId: 1 } }).toArray()
    return [...new Set(models.map((model) => model.appId))]
  }

  /** The latest live version of each of the app's `functions` models. */
  async liveFunctionLibraries(appId: string): Promise<StoredModel[]> {
    const versions = await this.collection.find({ appId, type: 'functions', live: true }, { sort: { version: -1 } }).toArray()
    const latest = new Map<string, StoredModel>()
    for (const model of versions) if (!latest.has(model.modelID)) latest.set(model.modelID, model)
    return [...latest.values()]
  }
}

export function modelRepository(store: Store): ModelRepository {
  return new ModelRepository(store.collection<StoredModel>(Collections.models))
}

export default repositoryPlugin('models', ({ store }) => modelRepository(store), { name: 'models-repository' })
