/**
 * The process models the engine runs, compiled once per model version and kept in the `app` cache
 * under the tenant's key (store/tenant.ts: evicting it drops everything kept of that organization's
 * app, and of no other organization's app of the same id). A version's model never changes, so a
 * compiled one can only be dropped, never be stale. What a deploy does change (which version is the
 * latest live one, the function libraries, the data collections, the constants) is kept with them
 * too: every deploy records an invalidation of the tenant (services/gateway/models/service.ts), and
 * each of those reads first applies the invalidations recorded so far (`caches.upToDate()`), so a
 * request sent after a deploy was answered uses what it deployed.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { CacheRegistry } from '../../../plugins/cache/registry.js'
import type { EngineErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { StoredModel } from '../../../store/collections.js'
import { type Tenant, tenantFilter, tenantKey } from '../../../store/tenant.js'
import { compileProcess } from '../../../runtime/compile.js'
import type { CompiledProcess, FlowFunctionDefinition, ProcessInstance, ProcessModelBody, WorkflowModel } from '../../../runtime/types.js'
import type { ModelRepository, UniqueKey } from './repository.js'
import { withFields } from '../../../lib/with-fields.js'

declare module 'fastify' {
  interface FastifyInstance {
    processModels: ProcessModels
  }
}

/** A tenant's app-wide functions by id. */
export type AppFunctions = ReadonlyMap<string, FlowFunctionDefinition>

/** A data collection a flow's data nodes use: where its documents are, and the unique indexes its model declares. */
export interface DeployedDataCollection {
  collectionName: string
  uniqueKeys: readonly UniqueKey[]
}

/** What a request's flows look up of their tenant's deployed models: a data collection or a constant by name, null when there is none. */
export interface DeployedLookups {
  dataCollection(name: string): Promise<DeployedDataCollection | null>
  constant(name: string): Promise<string | null>
}

/**
 * What the engine keeps of one tenant: its compiled process models by `<processId>@<version>`, and,
 * once read, the latest live version of each process started, its app-wide functions, and its data
 * collections and constants by name. Reads are kept as promises, so concurrent first requests share one read.
 */
export interface CompiledApp {
  processes: Map<string, CompiledProcess>
  latestVersions: Map<string, Promise<number | null>>
  functions?: Promise<AppFunctions>
  dataCollections: Map<string, Promise<DeployedDataCollection | null>>
  constants: Map<string, Promise<string | null>>
}

export class ProcessModels {
  constructor(
    private readonly repository: ModelRepository,
    private readonly caches: CacheRegistry,
    private readonly fail: ErrorFactory<EngineErrorCode>,
  ) {}

  /** The latest live version of the process, for a new instance (404 wm3002 when there is none); kept until a deploy. */
  async latest(tenant: Tenant, processId: string): Promise<CompiledProcess> {
    await this.caches.upToDate()
    const version = await keptWhenFound(this.app(tenant).latestVersions, processId, () =>
      this.repository.latestLiveProcessVersion(tenant, processId),
    )
    if (version === null)
      throw this.fail('wm3002', { args: [`${processId} in app ${tenant.appId}`], parameters: { processId, appId: tenant.appId } })
    return this.ofInstance(withFields(tenantFilter(tenant), { processId, modelVersion: version }))
  }

  /** The version a running instance started with. */
  async ofInstance(instance: Pick<ProcessInstance, 'organizationId' | 'appId' | 'processId' | 'modelVersion'>): Promise<CompiledProcess> {
    const cached = this.app(instance).processes.get(versionKey(instance.processId, instance.modelVersion))
    if (cached) return cached
    const model = await this.repository.liveProcessVersion(instance, instance.processId, instance.modelVersion)
    if (!model) {
      throw this.fail('wm3002', {
        args: [`${instance.processId} version ${instance.modelVersion} in app ${instance.appId}`],
        parameters: { processId: instance.processId, appId: instance.appId },
      })
    }
    return this.compiled(model)
  }

  /** The app of the organization that has a live model of the process (400 wm3003 when none has, or several have). */
  async resolveAppId(organizationId: string, processId: string): Promise<string> {
    const apps = await this.repository.appsWithLiveProcess(organizationId, processId)
    if (apps.length === 1) return apps[0] as string
    const reason =
      apps.length === 0
        ? `no app has a live model of process ${processId}`
        : `process ${processId} exists in several apps (${apps.sort().join(', ')})`
    throw this.fail('wm3003', { args: [reason], parameters: { field: 'body.appId', processId } })
  }

  /** The organization that has a live model of the process in the app (400 wm3003 when none has, or several have). */
  async resolveOrganizationId(appId: string, processId: string): Promise<string> {
    const organizations = await this.repository.organizationsWithLiveProcess(appId, processId)
    if (organizations.length === 1) return organizations[0] as string
    const reason =
      organizations.length === 0
        ? `no organization has a live model of process ${processId} in app ${appId}`
        : `process ${processId} of app ${appId} exists in several organizations: organizationId is required`
    throw this.fail('wm3003', { args: [reason], parameters: { field: 'body.organizationId', processId } })
  }

  /**
   * The app-wide functions (`functions` models), for the functions a process does not define itself.
   * Every flow run needs them, so they are read once per tenant and kept with its compiled models
   * (a deploy drops them, see the top of this file). A failed read is not kept.
   */
  async appFunctions(tenant: Tenant): Promise<AppFunctions> {
    await this.caches.upToDate()
    const app = this.app(tenant)
    if (!app.functions) {
      const loading = this.readAppFunctions(tenant)
      app.functions = loading
      loading.catch(() => {
        if (app.functions === loading) delete app.functions
      })
    }
    return app.functions
  }

  /** The tenant's data collection of that name (kept until a deploy), or null when its app has none. */
  async dataCollection(tenant: Tenant, name: string): Promise<DeployedDataCollection | null> {
    await this.caches.upToDate()
    return keptWhenFound(this.app(tenant).dataCollections, name, () => readDataCollection(this.repository, tenant, name))
  }

  /** The value of the tenant's constant of that name (kept until a deploy), or null when its app has none. */
  async constant(tenant: Tenant, name: string): Promise<string | null> {
    await this.caches.upToDate()
    return keptWhenFound(this.app(tenant).constants, name, () => this.repository.constantValue(tenant, name))
  }

  /** The tenant's lookups for a request's flows, kept as above. */
  lookupsFor(tenant: Tenant): DeployedLookups {
    return { dataCollection: (name) => this.dataCollection(tenant, name), constant: (name) => this.constant(tenant, name) }
  }

  private async readAppFunctions(tenant: Tenant): Promise<AppFunctions> {
    const functions = new Map<string, FlowFunctionDefinition>()
    for (const library of await this.repository.liveFunctionLibraries(tenant)) {
      const body = library.modelBody as { functions?: Record<string, FlowFunctionDefinition> }
      for (const [functionId, definition] of Object.entries(body.functions ?? {}))
        if (!functions.has(functionId)) functions.set(functionId, definition)
    }
    return functions
  }

  private app(tenant: Tenant): CompiledApp {
    return this.caches.cache<CompiledApp>('app').getOrCreate(tenantKey(tenant), () => ({
      processes: new Map(),
      latestVersions: new Map(),
      dataCollections: new Map(),
      constants: new Map(),
    }))
  }

  private compiled(model: StoredModel): CompiledProcess {
    const processId = model.processId ?? model.modelID
    const app = this.app(model).processes
    const key = versionKey(processId, model.version)
    const cached = app.get(key)
    if (cached) return cached
    const compiled = compileProcess(model as WorkflowModel<ProcessModelBody>, { functionCache: this.caches.cache('service') })
    app.set(key, compiled)
    return compiled
  }
}

/** The tenant's lookups read from the store each time (tests of the flow host without an engine). */
export function storedLookups(repository: ModelRepository, tenant: Tenant): DeployedLookups {
  return {
    dataCollection: (name) => readDataCollection(repository, tenant, name),
    constant: (name) => repository.constantValue(tenant, name),
  }
}

/** The tenant's data collection of that name as stored now, or null. */
async function readDataCollection(repository: ModelRepository, tenant: Tenant, name: string): Promise<DeployedDataCollection | null> {
  const entry = await repository.dataCollection(tenant, name)
  if (!entry) return null
  return { collectionName: entry.collectionName, uniqueKeys: await repository.uniqueIndexKeys(tenant, entry.modelID) }
}

/**
 * The read kept under `key`, or a new one kept while it runs: one that finds nothing or fails is
 * dropped, so only what exists stays (a tenant's models bound how much), and a failure is retried.
 */
function keptWhenFound<Value>(
  kept: Map<string, Promise<Value | null>>,
  key: string,
  read: () => Promise<Value | null>,
): Promise<Value | null> {
  const cached = kept.get(key)
  if (cached) return cached
  const reading = read()
  kept.set(key, reading)
  const drop = (): void => {
    if (kept.get(key) === reading) kept.delete(key)
  }
  reading.then((value) => {
    if (value === null) drop()
  }, drop)
  return reading
}

function versionKey(processId: string, version: number): string {
  return `${processId}@${version}`
}

async function processModelsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('processModels', new ProcessModels(fastify.models, fastify.caches, fastify.fail))
}

export default fp(processModelsPlugin, { name: 'process-models', dependencies: ['models-repository', 'errors', 'caches'] })
