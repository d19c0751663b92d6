/** Chooses the store from configuration: MongoDB when a URI is given, else the embedded store. */
import { EmbeddedStore } from './embedded/store.js'
import type { StoreLogger } from './logger.js'
import { MongoStore } from './mongodb/store.js'
import type { Store } from './port.js'

export interface OpenStoreOptions {
  /** Set: MongoDB (files in GridFS). Unset: the embedded store in `dataDir`. */
  mongodbUri?: string
  /** The embedded store's directory (created if missing); unused with MongoDB. */
  dataDir: string
  logger?: StoreLogger
  /** MongoDB's `maxTimeMS` for operations that take a filter (MONGODB_MAX_TIME_MS). */
  mongodbMaxTimeMs?: number
}

export async function openStore({ mongodbUri, dataDir, logger, mongodbMaxTimeMs }: OpenStoreOptions): Promise<Store> {
  if (mongodbUri)
    return MongoStore.open({
      uri: mongodbUri,
      ...(logger ? { logger } : {}),
      ...(mongodbMaxTimeMs === undefined ? {} : { maxTimeMs: mongodbMaxTimeMs }),
    })
  return EmbeddedStore.open({ dataDir, ...(logger ? { logger } : {}) })
}
