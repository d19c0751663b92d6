/**
 * Brings a store to the layout this release reads, once, at start, before anything is served. The
 * store records its schema version (`meta`, `_id` `storeSchema`); a store without one was written
 * by a release before versions were recorded (version 1).
 *
 * Whichever service opens the store first migrates it: it takes a lease on the version document
 * (one claim wins, through the `_id`), runs the steps, and writes the version last. Another service
 * starting meanwhile waits until the version is written, or takes over once the lease has run out
 * (its holder died). Every step is re-runnable, so a migration interrupted anywhere completes on
 * the next start with nothing lost or doubled. Written against the store port only, so the same
 * code migrates the embedded store and MongoDB.
 */
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Collections, type StoredSchemaVersion } from '../collections.js'
import type { StoreLogger } from '../logger.js'
import { isDuplicateKeyError, type Store } from '../port.js'
import { QUERY_FIELD_STEPS } from './query-fields.js'
import { redundantIndexSteps } from './redundant-indexes.js'
import { TENANT_PAIR_STEPS } from './tenant-pair.js'

/** The schema version this release reads and writes. */
export const STORE_SCHEMA_VERSION = 6

/** One re-runnable step of a migration. */
export interface MigrationStep {
  name: string
  run(store: Store, log: StoreLogger): Promise<void>
}

/** The steps from each version to the next: index 0 takes version 1 to 2. */
const MIGRATIONS: ReadonlyArray<readonly MigrationStep[]> = [
  TENANT_PAIR_STEPS,
  QUERY_FIELD_STEPS,
  redundantIndexSteps(4),
  redundantIndexSteps(5),
  redundantIndexSteps(6),
]

/** How long a migrating service holds the store before another may take over; renewed after every step. */
const LEASE_MS = 60_000
/** How often a service waiting for another's migration looks again. */
const WAIT_POLL_MS = 250

export interface MigrateOptions {
  logger?: StoreLogger | undefined
  /** Called after each step has run (tests interrupt a migration here). */
  afterStep?: (name: string) => void | Promise<void>
  now?: () => Date
}

export type MigrationOutcome = 'current' | 'migrated' | 'migrated-by-another'

const SCHEMA_ID = 'storeSchema'

function schemaDocument(store: Store) {
  return store.collection<StoredSchemaVersion>(Collections.meta)
}

/** The store's schema version: 1 when none was recorded. */
export async function storeSchemaVersion(store: Store): Promise<number> {
  return (await schemaDocument(store).findOne({ _id: SCHEMA_ID }))?.version ?? 1
}

/** Migrates the store to STORE_SCHEMA_VERSION unless it is there already (or another service does it meanwhile). */
export async function migrateStore(store: Store, options: MigrateOptions = {}): Promise<MigrationOutcome> {
  const now = options.now ?? (() => new Date())
  const owner = randomUUID()
  for (let waited = false; ; waited = true) {
    const version = await storeSchemaVersion(store)
    if (version > STORE_SCHEMA_VERSION)
      throw new Error(`The store has schema version ${version}, newer than this release's ${STORE_SCHEMA_VERSION}: upgrade the service`)
    if (version === STORE_SCHEMA_VERSION) return waited ? 'migrated-by-another' : 'current'
    if (await claim(store, owner, now())) {
      await runSteps(store, version, owner, options, now)
      return 'migrated'
    }
    await sleep(WAIT_POLL_MS)
  }
}

/** Takes the lease unless another service holds a live one; true when this one holds it now. */
async function claim(store: Store, owner: string, now: Date): Promise<boolean> {
  try {
    const claimed = await schemaDocument(store).findOneAndUpdate(
      {
        _id: SCHEMA_ID,
        $or: [{ migrationLeaseUntil: { $exists: false } }, { migrationLeaseUntil: { $lt: now } }],
      },
      { $set: { migrationOwner: owner, migrationLeaseUntil: new Date(now.getTime() + LEASE_MS) } },
      { upsert: true, returnDocument: 'after' },
    )
    return claimed?.migrationOwner === owner
  } catch (error) {
    // The document exists with a live lease: the upsert's insert of the same `_id` lost.
    if (isDuplicateKeyError(error)) return false
    throw error
  }
}

async function runSteps(store: Store, from: number, owner: string, options: MigrateOptions, now: () => Date): Promise<void> {
  const log = options.logger
  try {
    for (let version = from; version < STORE_SCHEMA_VERSION; version++) {
      const steps = MIGRATIONS[version - 1] ?? []
      log?.info({ from: version, to: version + 1, steps: steps.map((step) => step.name) }, 'migrating the store')
      for (const step of steps) {
        await step.run(store, log ?? SILENT)
        await options.afterStep?.(step.name)
        await renewLease(store, owner, now())
      }
    }
  } catch (error) {
    // A failed step lets the next start take over at once (a service that dies holds its lease until it runs out).
    await schemaDocument(store)
      .updateOne({ _id: SCHEMA_ID, migrationOwner: owner }, { $unset: { migrationOwner: '', migrationLeaseUntil: '' } })
      .catch(() => undefined)
    throw error
  }
  // Written last: a migration that stopped before this point runs again (every step is re-runnable).
  const written = await schemaDocument(store).updateOne(
    { _id: SCHEMA_ID, migrationOwner: owner },
    { $set: { version: STORE_SCHEMA_VERSION }, $unset: { migrationOwner: '', migrationLeaseUntil: '' } },
  )
  if (written.matchedCount === 0) throw new Error('Another service took over the store migration: this one stops')
  log?.info({ version: STORE_SCHEMA_VERSION }, 'store migrated')
}

async function renewLease(store: Store, owner: string, now: Date): Promise<void> {
  const renewed = await schemaDocument(store).updateOne(
    { _id: SCHEMA_ID, migrationOwner: owner },
    { $set: { migrationLeaseUntil: new Date(now.getTime() + LEASE_MS) } },
  )
  if (renewed.matchedCount === 0) throw new Error('Another service took over the store migration: this one stops')
}

const SILENT: StoreLogger = { info: () => undefined, warn: () => undefined }
