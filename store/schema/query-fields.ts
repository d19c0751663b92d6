/**
 * Version 2 → 3: process instances carry the query fields the task inbox, the instances query and
 * the incidents query read through their indexes (store/context-fields.ts). Instances stored by an
 * earlier release get them derived from their `processInstance`, a page at a time in `_id` order;
 * an instance that has them already is left alone, so the step is re-runnable.
 */
import { Collections, type StoredContext } from '../collections.js'
import { queryFields } from '../context-fields.js'
import type { Store } from '../port.js'
import type { MigrationStep } from './migrate.js'

const PAGE = 500

async function deriveQueryFields(store: Store): Promise<void> {
  const contexts = store.collection<StoredContext>(Collections.contexts)
  let after: string | undefined
  for (;;) {
    const filter = { viewers: { $exists: false }, ...(after === undefined ? {} : { _id: { $gt: after } }) }
    const page = await contexts.find(filter, { sort: { _id: 1 }, limit: PAGE, projection: { _id: 1, processInstance: 1 } }).toArray()
    for (const stored of page) await contexts.updateOne({ _id: stored._id }, { $set: queryFields(stored.processInstance) })
    if (page.length < PAGE) return
    after = page[page.length - 1]?._id
  }
}

export const QUERY_FIELD_STEPS: readonly MigrationStep[] = [{ name: 'instances carry their query fields', run: deriveQueryFields }]
