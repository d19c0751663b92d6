/**
 * Test support: deploys the example models of examples/ straight into a store, as live
 * versions, the way the gateway's insertModel leaves them (a StoredModel per live version, plus the
 * constants and the data-collection registry entry those model types declare, and the invalidation
 * of the tenant's cached models that running engines apply). Tests of the engine use it instead of
 * going through the gateway.
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { examplesDir } from '../../lib/server/paths.js'
import type { Store } from '../../store/port.js'
import { constantDocumentId, dataCollectionName, tenantFilter } from '../../store/tenant.js'
import { recordTenantDeploy } from '../../plugins/cache/invalidations.js'
import type { DataCollectionModelBody, ProcessModelBody, WorkflowModel } from '../../runtime/types.js'
import { Collections, type StoredConstant, type StoredDataCollection, type StoredModel } from '../../store/collections.js'

export const EXAMPLES_DIR = examplesDir

export interface DeployOptions {
  appId: string
  organizationId: string
  /** The live version to store; default: one above the highest stored live version of the model. */
  version?: number
  /** Changes the example's body before it is stored (e.g. a variant for one test). */
  edit?: (body: Record<string, unknown>) => void
}

/** The example model as its file gives it (`leave-request` or `leave-request.json`). */
export function readExample(fileName: string): Pick<WorkflowModel, 'modelID' | 'type' | 'name' | 'modelBody'> {
  const file = fileName.endsWith('.json') ? fileName : `${fileName}.json`
  return JSON.parse(readFileSync(join(EXAMPLES_DIR, file), 'utf8')) as Pick<WorkflowModel, 'modelID' | 'type' | 'name' | 'modelBody'>
}

/** The physical collection of a data collection, named as the gateway's insertModel names it. */
export { dataCollectionName }

/** Stores the example as a live model version and returns what was stored. */
export async function deployExample(store: Store, fileName: string, options: DeployOptions): Promise<StoredModel> {
  const example = readExample(fileName)
  const body = structuredClone(example.modelBody) as Record<string, unknown>
  options.edit?.(body)
  const models = store.collection<StoredModel>(Collections.models)
  const tenant = tenantFilter(options)
  const latest = await models.findOne({ ...tenant, modelID: example.modelID, live: true }, { sort: { version: -1 } })
  const model: StoredModel = {
    modelID: example.modelID,
    type: example.type,
    appId: options.appId,
    organizationId: options.organizationId,
    ...(example.name === undefined ? {} : { name: example.name }),
    version: options.version ?? (latest?.version ?? 0) + 1,
    updateDate: new Date().toISOString(),
    modelBody: body,
    live: true,
  }
  if (example.type === 'process') model.processId = (body as unknown as ProcessModelBody).processId ?? example.modelID
  await models.insertOne(model)

  if (example.type === 'constants') {
    const constants = store.collection<StoredConstant>(Collections.constants)
    for (const [name, value] of Object.entries(body)) {
      const constant: StoredConstant = {
        _id: constantDocumentId(tenant, name),
        ...tenant,
        name,
        value: String(value),
        modelID: example.modelID,
      }
      await constants.replaceOne({ _id: constant._id }, constant, { upsert: true })
    }
  }
  if (example.type === 'dataCollection') {
    const name = String(body.name)
    const entry: StoredDataCollection = {
      ...tenant,
      name,
      modelID: example.modelID,
      collectionName: dataCollectionName(tenant, example.modelID),
    }
    await store.collection<StoredDataCollection>(Collections.dataCollections).replaceOne({ ...tenant, name }, entry, { upsert: true })
    const indexes = (body as unknown as DataCollectionModelBody).indexes ?? []
    for (const index of indexes) await store.collection(entry.collectionName).createIndex(index.keys, { unique: index.unique === true })
  }
  await recordTenantDeploy(store, tenant)
  return model
}

/**
 * Gives a stored constant of the tenant a new value, as a new version of its `constants` model
 * would: running engines drop the constants they kept (the tests' switch of the payroll outage).
 */
export async function setConstant(
  store: Store,
  tenant: { organizationId: string; appId: string },
  name: string,
  value: string,
): Promise<void> {
  await store.collection<StoredConstant>(Collections.constants).updateOne({ _id: constantDocumentId(tenant, name) }, { $set: { value } })
  await recordTenantDeploy(store, tenant)
}

/** The insertModel request of an example, for tests that go through the gateway. */
export function insertModelRequest(
  fileName: string,
  options: { appId: string; organizationId: string; live?: boolean; edit?: (body: Record<string, unknown>) => void },
): { model: Record<string, unknown>; live: boolean; appId: string; organizationId: string } {
  const example = readExample(fileName)
  const modelBody = structuredClone(example.modelBody) as Record<string, unknown>
  options.edit?.(modelBody)
  return { model: { ...example, modelBody }, live: options.live ?? true, appId: options.appId, organizationId: options.organizationId }
}

/**
 * A model body as a test edits it: the edits reach deep into example models whose shapes the
 * validator (or the engine) is about to judge, so the test states no type for what it changes.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type EditableModelBody = Record<string, any>
