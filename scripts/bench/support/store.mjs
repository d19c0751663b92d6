// @ts-check
/** The embedded store the benches seed before (or while) the service runs. */
import { randomUUID } from 'node:crypto'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { importBuilt } from './dist.mjs'

const { openStore } = await importBuilt('store/open.js')
const { deployExample } = await importBuilt('services/testing/models.js')
const { Collections } = await importBuilt('store/collections.js')
const { isDataCollection } = await importBuilt('store/tenant.js')

/** How many copies go to the store in one write. */
const COPIES_PER_WRITE = 2000

/**
 * A temporary folder for a bench's data, removed when `use` settles.
 * @template T @param {string} prefix @param {(dir: string) => Promise<T>} use @returns {Promise<T>}
 */
export async function withTempDir(prefix, use) {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  try {
    return await use(dir)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * The embedded store in `dataDir`, open while `use` runs (the service must not run on it meanwhile).
 * @template T @param {string} dataDir @param {(store: any) => Promise<T>} use @returns {Promise<T>}
 */
export async function withStore(dataDir, use) {
  const store = await openStore({ dataDir })
  try {
    return await use(store)
  } finally {
    await store.close()
  }
}

/**
 * Deploys the repository's example models named, in order, into one tenant.
 * @param {unknown} store @param {string[]} names @param {{ appId: string, organizationId: string }} tenant
 */
export async function deployExamples(store, names, tenant) {
  for (const name of names) await deployExample(store, name, tenant)
}

/**
 * The documents of the data collections that hold the instance's business key (what its flow functions
 * recorded, such as a leave booking), by collection.
 * @param {any} store @param {string} businessKey @returns {Promise<Array<{ collection: string, docs: any[] }>>}
 */
async function recordsOf(store, businessKey) {
  const records = []
  for (const collection of await store.listCollections()) {
    if (!isDataCollection(collection)) continue
    const docs = await store.collection(collection).find({ businessKey }).toArray()
    if (docs.length > 0) records.push({ collection, docs })
  }
  return records
}

/**
 * Stores `count` copies of the first stored instance in `processStatus` (its context, its notification and,
 * with `withHistory`, its activities and the data collection documents holding its business key) under
 * new ids, so that a bench runs against a store of that size. `copy` answers a copy's process instance
 * from the template's (the data documents take its business key), and when it gives `lastUpdate`, the
 * copy's context and activities date from then. Answers how many data documents were copied.
 * @param {any} store
 * @param {{
 *   processStatus: string,
 *   count: number,
 *   withHistory?: boolean,
 *   copy: (template: any, index: number, processInstanceId: string) => { processInstance: any, lastUpdate?: Date },
 * }} how
 * @returns {Promise<number>}
 */
export async function storeInstanceCopies(store, { processStatus, count, withHistory = false, copy }) {
  const contexts = store.collection(Collections.contexts)
  const [template] = await contexts.find({ processStatus }, { limit: 1 }).toArray()
  if (!template) throw new Error(`no ${processStatus} instance to copy`)
  const notification = await store.collection(Collections.notifications).findOne({ _id: template._id })
  /** @type {any[]} */
  const activities = withHistory ? await store.collection(Collections.activities).find({ processInstanceId: template._id }).toArray() : []
  const records = withHistory ? await recordsOf(store, template.businessKey) : []
  let dataDocuments = 0
  for (let offset = 0; offset < count; offset += COPIES_PER_WRITE) {
    /** @type {{ contexts: object[], notifications: object[], activities: object[] }} */
    const batch = { contexts: [], notifications: [], activities: [] }
    /** @type {Map<string, object[]>} */
    const recordCopies = new Map(records.map(({ collection }) => [collection, []]))
    for (let i = offset; i < Math.min(count, offset + COPIES_PER_WRITE); i++) {
      const processInstanceId = randomUUID()
      const { processInstance, lastUpdate } = copy(template.processInstance, i, processInstanceId)
      const dated = lastUpdate ? { lastUpdate } : {}
      batch.contexts.push({ ...template, _id: processInstanceId, processInstance, businessKey: processInstance.businessKey, ...dated })
      if (notification) batch.notifications.push({ ...notification, _id: processInstanceId, processInstance })
      for (const activity of activities)
        batch.activities.push({
          ...activity,
          _id: randomUUID(),
          processInstanceId,
          timeStamp: lastUpdate?.toISOString() ?? activity.timeStamp,
        })
      for (const { collection, docs } of records)
        for (const doc of docs) recordCopies.get(collection)?.push({ ...doc, _id: randomUUID(), businessKey: processInstance.businessKey })
    }
    await contexts.insertMany(batch.contexts)
    if (batch.notifications.length > 0) await store.collection(Collections.notifications).insertMany(batch.notifications)
    if (batch.activities.length > 0) await store.collection(Collections.activities).insertMany(batch.activities)
    for (const [collection, copies] of recordCopies) {
      if (copies.length > 0) await store.collection(collection).insertMany(copies)
      dataDocuments += copies.length
    }
  }
  return dataDocuments
}
