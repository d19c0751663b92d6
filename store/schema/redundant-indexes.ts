/**
 * Indexes a later release found redundant, each dropped by the migration to the version named. An
 * index only costs an entry per instance: in memory, and with the embedded store one per ended
 * instance in `cold_keys`. Dropping an index that is not there does nothing, so each step is
 * re-runnable.
 *
 * - Version 3 → 4: `contexts` on `processId, processStatus, appId` holds the fields of
 *   `engine_running_instances` (`processStatus, processId, appId`, services/engine/queries/repository.ts),
 *   which serves every query that pins the three.
 * - Version 4 → 5: `contexts` on `processId, appId, lastUpdate` served the updated-between query,
 *   which `engine_updated_between` (the same fields first, then the tenant's organization and every
 *   field of the answer) now serves, from its entries alone.
 * - Version 5 → 6: `contexts` on `businessKey, processId, appId` served the business-key lookups
 *   without the organization; they now pin the tenant, which `engine_instances_by_key`
 *   (`organizationId, appId, businessKey`, services/engine/queries/repository.ts) serves. `contexts`
 *   on `appId, lastUpdate` served no query any more.
 */
import { Collections } from '../collections.js'
import type { Store } from '../port.js'
import type { MigrationStep } from './migrate.js'

export const REDUNDANT_INDEXES: ReadonlyArray<{ collection: string; name: string; droppedBy: number }> = [
  { collection: Collections.contexts, name: 'processId_1_processStatus_1_appId_1', droppedBy: 4 },
  { collection: Collections.contexts, name: 'processId_1_appId_1_lastUpdate_-1', droppedBy: 5 },
  { collection: Collections.contexts, name: 'businessKey_1_processId_1_appId_1', droppedBy: 6 },
  { collection: Collections.contexts, name: 'appId_1_lastUpdate_-1', droppedBy: 6 },
]

/** The step of the migration to `version` that drops the indexes it found redundant. */
export function redundantIndexSteps(version: number): readonly MigrationStep[] {
  const dropped = REDUNDANT_INDEXES.filter((index) => index.droppedBy === version)
  const run = async (store: Store): Promise<void> => {
    for (const { collection, name } of dropped) await store.collection(collection).dropIndex(name)
  }
  return [{ name: 'drop redundant indexes', run }]
}
