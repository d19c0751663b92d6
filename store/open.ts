/** Chooses the store from configuration: MongoDB when a URI is given, else the embedded store. */
import type { StoreLogger } from './logger.js'
import type { Store } from './port.js'
import { migrateStore } from './schema/migrate.js'

export interface OpenStoreOptions {
  /** Set: MongoDB (files in GridFS). Unset: the embedded store in `dataDir`. */
  mongodbUri?: string
  /** The embedded store's directory (created if missing); unused with MongoDB. */
  dataDir: string
  logger?: StoreLogger
  /** MongoDB's `maxTimeMS` for operations that take a filter (MONGODB_MAX_TIME_MS). */
  mongodbMaxTimeMs?: number
}

/**
 * Opens the store and brings it to this release's schema (store/schema/migrate.ts) before anyone
 * uses it; a failed migration closes it again and fails the start.
 */
export async function openStore({ mongodbUri, dataDir, logger, mongodbMaxTimeMs }: OpenStoreOptions): Promise<Store> {
  const store = await openChosenStore({ mongodbUri, dataDir, logger, mongodbMaxTimeMs })
  try {
    await migrateStore(store, { logger })
  } catch (error) {
    await store.close()
    throw error
  }
  return store
}

/**
 * Each store's module is loaded only when chosen: the MongoDB driver alone takes about 0.2 s of
 * every start of a service on the embedded store.
 */
async function openChosenStore({ mongodbUri, dataDir, logger, mongodbMaxTimeMs }: OpenStoreOptions): Promise<Store> {
  if (mongodbUri) {
    const { MongoStore } = await import('./mongodb/store.js')
    return MongoStore.open({
      uri: mongodbUri,
      ...(logger ? { logger } : {}),
      ...(mongodbMaxTimeMs === undefined ? {} : { maxTimeMs: mongodbMaxTimeMs }),
    })
  }
  const { EmbeddedStore } = await import('./embedded/store.js')
  return EmbeddedStore.open({ dataDir, ...(logger ? { logger } : {}) })
}
