/**
 * Process instance ids: UUIDv7 (RFC 9562), whose first 48 bits are the creation time in
 * milliseconds, so a new id sorts after the ones made before it (within one process even in the
 * same millisecond: the library keeps a counter). Each store keys by this id an instance, its
 * notification record and its activities' index entries, and the embedded store's cold tier orders
 * the index entries of ended instances by it where their keys tie (store/embedded/journal.ts). A
 * random (v4) id put every new instance on a random page of each of those B-trees, which with a long
 * history is a page read, a page write and a checkpoint write per tree per instance
 * (docs/performance.md#time-ordered-instance-ids); a time-ordered one lands beside the one before.
 * Instances stored with v4 ids keep them: both are UUIDs, and nothing reads the version. An id a
 * caller chooses is kept as given, and so is a scheduled run's, which is derived from its job so
 * that a retried run starts nothing more (services/engine/jobs/scheduler/scheduled-run.ts).
 *
 * Only instance ids: `$uuid()` in expressions and `uuid()` in flow functions stay random (v4), as
 * models cut short keys out of them (examples/leave-request.json's businessKey).
 */
import { v7 } from 'uuid'

export function newInstanceId(): string {
  return v7()
}
