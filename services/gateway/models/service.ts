/**
 * Model management (docs/reference/gateway.md#models; the format: docs/models.md).
 *
 * insertModel validates the model (validateModel: schema, references, JSON Schemas, expressions)
 * and then stores it: `live: true` adds a new version and keeps the earlier ones (running instances
 * keep theirs) and applies the model's side effects (constants, data collection, deploy job);
 * `live: false` replaces the model's single draft and has no side effect (no instance uses a draft).
 * A failure part-way undoes what was written. Every insert invalidates the app's cached models on
 * every instance.
 *
 * Reads (getModel, settings) go through the `app` cache: per tenant (organizationId + appId, keyed
 * by tenantKey), the served version of each model (the latest live one, else the draft) and the
 * tenant's settings files. Everything is looked up inside one tenant: two organizations may each
 * have an app of the same id, with models of the same ids. This instance evicts the tenant at once
 * after its own insert; a read first applies the invalidations other instances recorded
 * (`caches.upToDate()`), so every gateway serves an answered deploy at once.
 */
import type { FastifyBaseLogger, FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { InsertModelRequest } from '../../../openapi/generated/schemas.js'
import { recordTenantDeploy } from '../../../plugins/cache/invalidations.js'
import type { CacheRegistry, NamedCache } from '../../../plugins/cache/registry.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { isDuplicateKeyError, type Store } from '../../../store/port.js'
import { validateModel } from '../../../model/validation.js'
import type { DataCollectionModelBody, JsonObject, ProcessModelBody } from '../../../model/types.js'
import type { StoredDataCollection, StoredModel } from '../../../store/collections.js'
import { constantDocumentId, dataCollectionName, type Tenant, tenantFilter, tenantKey } from '../../../store/tenant.js'
import type { ModelRepository } from './repository.js'

declare module 'fastify' {
  interface FastifyInstance {
    modelService: ModelService
  }
}

export type InsertResult = 'inserted' | 'updated'

/** A model version as getModel answers it: the body serialized once, with its ETag. */
export interface ServedModel {
  body: Buffer
  etag: string
  type: StoredModel['type']
}

/** What the gateway caches per tenant (`app` cache, keyed by tenantKey). */
export class AppModels {
  readonly models = new Map<string, Promise<ServedModel | null>>()
  /** One entry, `files`: the settings files of the app by file id. */
  readonly settings = new Map<'files', Promise<Map<string, unknown>>>()
}

/** Concurrent live inserts of one model race for the next version; the loser tries the one after. */
const VERSION_ATTEMPTS = 5

/** `"<modelID>-<version>-<updateDate>-<byteLength>"`: it changes whenever the model does. */
export function modelEtag(model: Pick<StoredModel, 'modelID' | 'version' | 'updateDate'>, byteLength: number): string {
  return `"${model.modelID}-${model.version}-${model.updateDate}-${byteLength}"`
}

/** Does an `if-none-match` header (one tag, a list, weak tags, or `*`) match the current ETag? */
export function etagMatches(ifNoneMatch: string | undefined, etag: string): boolean {
  if (ifNoneMatch === undefined) return false
  const opaque = (tag: string): string =>
    tag
      .trim()
      .replace(/^W\//, '')
      .replace(/^"(.*)"$/, '$1')
  const current = opaque(etag)
  return ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || opaque(tag) === current)
}

/** Memoises a load in a map; a failed load is forgotten so the next read tries again. */
function remembered<Key, Value>(map: Map<Key, Promise<Value>>, key: Key, load: () => Promise<Value>): Promise<Value> {
  const known = map.get(key)
  if (known) return known
  const loading = load()
  map.set(key, loading)
  loading.catch(() => map.delete(key))
  return loading
}

/** Undo steps of a half-done insert, run newest first when a later step fails. */
class UndoLog {
  private readonly steps: Array<() => Promise<unknown>> = []

  add(step: () => Promise<unknown>): void {
    this.steps.push(step)
  }

  async run(log: FastifyBaseLogger): Promise<void> {
    for (const step of this.steps.reverse()) {
      await step().catch((error: unknown) => log.error({ err: error }, 'cannot undo part of a failed model insert'))
    }
  }
}

export class ModelService {
  constructor(
    private readonly repository: ModelRepository,
    private readonly store: Store,
    private readonly caches: CacheRegistry,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
    private readonly log: FastifyBaseLogger,
  ) {}

  async insert(request: InsertModelRequest, now: Date = new Date()): Promise<InsertResult> {
    const { model, live } = request
    const appId = model.appId ?? request.appId
    if (appId === undefined || appId === '')
      throw this.fail('fm4000', {
        args: ['body.model.appId is required (or the injected body.appId)'],
        parameters: { field: 'body.model.appId' },
      })
    const organizationId = model.organizationId ?? request.organizationId
    if (organizationId === undefined || organizationId === '')
      throw this.fail('fm4000', {
        args: ['body.model.organizationId is required (or the injected body.organizationId): the tenant is organization and app'],
        parameters: { field: 'body.model.organizationId' },
      })
    const tenant: Tenant = { organizationId, appId }
    const appFunctions = await this.repository.liveAppFunctionIds(tenant, model.type === 'functions' ? model.modelID : undefined)
    const fault = validateModel(model, appFunctions)
    if (fault) throw this.invalid(fault.path, fault.message)

    const existed = await this.repository.hasModel(tenant, model.modelID)
    const stored: StoredModel = {
      modelID: model.modelID,
      type: model.type,
      ...tenantFilter(tenant),
      ...(model.name === undefined ? {} : { name: model.name }),
      version: 0,
      updateDate: now.toISOString(),
      modelBody: model.modelBody,
      live,
      ...(model.type === 'process' ? { processId: (model.modelBody as unknown as ProcessModelBody).processId ?? model.modelID } : {}),
    }
    const undo = new UndoLog()
    // Every instance drops the tenant's cached models through the record (this one at once, below).
    const invalidate = () => recordTenantDeploy(this.store, tenant, now)
    try {
      if (live) await this.insertLive(stored, now, undo)
      else await this.replaceDraft(stored, undo)
      await invalidate()
    } catch (error) {
      await undo.run(this.log)
      // An engine may have read (and kept) what was undone, such as the new latest version.
      await invalidate().catch((recording: unknown) =>
        this.log.error({ err: recording }, 'the invalidation after an undone model insert was not recorded'),
      )
      throw error
    } finally {
      this.caches.evict('app', tenantKey(tenant))
    }
    return existed ? 'updated' : 'inserted'
  }

  private invalid(path: string, message: string) {
    return this.fail('fm3010', { args: [path, message], parameters: { field: `body.model.${path}` } })
  }

  private async insertLive(model: StoredModel, now: Date, undo: UndoLog): Promise<void> {
    if (model.type === 'dataCollection') await this.prepareDataCollection(model)
    await this.storeNextVersion(model)
    undo.add(() => this.repository.removeVersion(model))
    if (model.type === 'constants') await this.replaceConstants(model, undo)
    if (model.type === 'dataCollection') await this.registerDataCollection(model, undo)
    if (model.type === 'jobScheduler') {
      const jobId = await this.repository.enqueueDeploy(model, now)
      undo.add(() => this.repository.removeBatchJob(jobId))
    }
  }

  private async replaceDraft(model: StoredModel, undo: UndoLog): Promise<void> {
    const previous = await this.repository.draft(model, model.modelID)
    await this.repository.upsertDraft(model)
    undo.add(() => (previous ? this.repository.upsertDraft(previous) : this.repository.removeVersion(model)))
  }

  private async storeNextVersion(model: StoredModel): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      model.version = (await this.repository.latestLiveVersion(model, model.modelID)) + 1
      try {
        await this.repository.insertLive(model)
        return
      } catch (error) {
        if (!isDuplicateKeyError(error) || attempt === VERSION_ATTEMPTS) throw error
      }
    }
  }

  /** The model's constants become exactly its body's (stored as `<tenantKey>:<name>`, store/tenant.ts). */
  private async replaceConstants(model: StoredModel, undo: UndoLog): Promise<void> {
    const body = model.modelBody as Record<string, string>
    const ids = Object.keys(body).map((name) => constantDocumentId(model, name))
    const before = [...(await this.repository.constantsOfModel(model, model.modelID)), ...(await this.repository.constantsById(ids))]
    undo.add(async () => {
      for (const id of ids) await this.repository.removeConstant(id)
      for (const constant of before) await this.repository.putConstant(constant)
    })
    for (const [name, value] of Object.entries(body)) {
      await this.repository.putConstant({
        _id: constantDocumentId(model, name),
        ...tenantFilter(model),
        name,
        value,
        modelID: model.modelID,
      })
    }
    for (const constant of before)
      if (constant.modelID === model.modelID && !Object.hasOwn(body, constant.name)) await this.repository.removeConstant(constant._id)
  }

  /** Before anything is stored: the name is the app's only one of it, and the indexes can be built. */
  private async prepareDataCollection(model: StoredModel): Promise<void> {
    const body = model.modelBody as unknown as DataCollectionModelBody
    const [owner] = await this.repository.dataCollectionsOf(model, { name: body.name })
    if (owner && owner.modelID !== model.modelID)
      throw this.invalid('modelBody.name', `is already the name of the data collection of model ${owner.modelID}`)
    const collectionName = dataCollectionName(model, model.modelID)
    for (const [position, index] of (body.indexes ?? []).entries()) {
      try {
        await this.repository.createDataIndex(collectionName, index.keys, index.unique === true)
      } catch (error) {
        throw this.invalid(`modelBody.indexes[${position}]`, `cannot be created on the stored documents: ${(error as Error).message}`)
      }
    }
  }

  private async registerDataCollection(model: StoredModel, undo: UndoLog): Promise<void> {
    const { name } = model.modelBody as unknown as DataCollectionModelBody
    const before = await this.repository.dataCollectionsOf(model, { modelID: model.modelID })
    undo.add(async () => {
      await this.repository.removeDataCollection(model, name)
      for (const entry of before) await this.repository.putDataCollection(entry)
    })
    const entry: StoredDataCollection = {
      ...tenantFilter(model),
      name,
      modelID: model.modelID,
      collectionName: dataCollectionName(model, model.modelID),
    }
    await this.repository.putDataCollection(entry)
    // A renamed collection is found by its new name only; its documents stay where they are.
    for (const old of before) if (old.name !== name) await this.repository.removeDataCollection(model, old.name)
  }

  // ------------------------------------------------------------------------------ reads

  private cached(tenant: Tenant): AppModels {
    return this.appCache().getOrCreate(tenantKey(tenant), () => new AppModels())
  }

  private appCache(): NamedCache<AppModels> {
    return this.caches.cache<AppModels>('app')
  }

  /** The model getModel serves; null when the tenant has no such model. */
  async served(tenant: Tenant, modelID: string): Promise<ServedModel | null> {
    await this.caches.upToDate()
    return remembered(this.cached(tenant).models, modelID, async () => {
      const model = await this.repository.served(tenant, modelID)
      if (!model) return null
      const body = Buffer.from(JSON.stringify(model.modelBody))
      return { body, etag: modelEtag(model, body.byteLength), type: model.type }
    })
  }

  /**
   * The tenant a model id belongs to when an admin's request names none or only part of it: the
   * only tenant (within what was named) that has it (several → 400 naming the missing field; none → null).
   */
  async tenantOfModel(modelID: string, named: { organizationId?: string | undefined; appId?: string | undefined }): Promise<Tenant | null> {
    const tenants = (await this.repository.tenantsWithModel(modelID)).filter(
      (tenant) =>
        (named.organizationId === undefined || named.organizationId === tenant.organizationId) &&
        (named.appId === undefined || named.appId === tenant.appId),
    )
    if (tenants.length > 1) {
      const field = named.organizationId === undefined ? 'query.organizationId' : 'query.appId'
      throw this.fail('fm4000', {
        args: [`${field} is required: model ${modelID} exists in ${tenants.map(tenantKey).sort().join(', ')}`],
        parameters: { field },
      })
    }
    return tenants[0] ?? null
  }

  /** The only tenant (of the organization, when one is named) with a process model of this processId, or null. */
  async tenantOfProcess(processId: string, organizationId: string | undefined): Promise<Tenant | null> {
    const tenants = await this.repository.tenantsWithProcess(processId, organizationId)
    return tenants.length === 1 ? (tenants[0] as Tenant) : null
  }

  /** The only organization with models in this app, or null (none, or several). */
  async onlyOrganizationOfApp(appId: string): Promise<string | null> {
    const organizations = await this.repository.organizationsOfApp(appId)
    return organizations.length === 1 ? (organizations[0] as string) : null
  }

  /** The tenant's settings files, from its `settings` models (a newer model's file wins). */
  async settingsFiles(tenant: Tenant): Promise<Map<string, unknown>> {
    await this.caches.upToDate()
    return remembered(this.cached(tenant).settings, 'files', () => this.loadSettings(tenant))
  }

  private async loadSettings(tenant: Tenant): Promise<Map<string, unknown>> {
    const files = new Map<string, unknown>()
    for (const model of await this.repository.servedOfType(tenant, 'settings')) {
      for (const [fileId, content] of Object.entries((model.modelBody as { files: JsonObject }).files)) files.set(fileId, content)
    }
    return files
  }
}

async function modelServicePlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('modelService', new ModelService(fastify.modelRepository, fastify.store, fastify.caches, fastify.fail, fastify.log))
}

export default fp(modelServicePlugin, { name: 'model-service', dependencies: ['model-repository', 'store', 'caches', 'errors'] })
