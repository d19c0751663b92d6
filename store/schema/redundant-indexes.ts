/**
 * Version 3 → 4: the `contexts` index on `processId, processStatus, appId` goes. It holds the fields
 * of `engine_running_instances` (`processStatus, processId, appId`, services/engine/queries/repository.ts),
 * which serves every query that pins the three, and a lookup by process alone has
 * `processId, appId, lastUpdate`. It only cost an entry per instance: in memory, and with the embedded
 * store one per ended instance in `cold_keys`. Dropping an index that is not there does nothing, so
 * the step is re-runnable.
 */
import { Collections } from '../collections.js'
import type { Store } from '../port.js'
import type { MigrationStep } from './migrate.js'

export const REDUNDANT_INDEXES: ReadonlyArray<{ collection: string; name: string }> = [
  { collection: Collections.contexts, name: 'processId_1_processStatus_1_appId_1' },
]

async function dropRedundantIndexes(store: Store): Promise<void> {
  for (const { collection, name } of REDUNDANT_INDEXES) await store.collection(collection).dropIndex(name)
}

export const REDUNDANT_INDEX_STEPS: readonly MigrationStep[] = [{ name: 'drop redundant indexes', run: dropRedundantIndexes }]
