/**
 * Process instance ids: UUIDv7 (RFC 9562), whose first 48 bits are the creation time in
 * milliseconds, so a new id sorts after the ones made before it (within one process even in the
 * same millisecond: a counter follows the time, below). Each store keys by this id an instance and
 * its activities' index entries, and the embedded store's cold tier orders the index entries of
 * ended instances by it where their keys tie (store/embedded/journal.ts). A random (v4) id put every
 * new instance on a random page of each of those B-trees, which with a long history is a page read,
 * a page write and a checkpoint write per tree per instance
 * (docs/performance.md#time-ordered-instance-ids); a time-ordered one lands beside the one before.
 * Instances stored with v4 ids keep them: both are UUIDs, and nothing reads the version. An id a
 * caller chooses is kept as given, and so is a scheduled run's, which is derived from its job so
 * that a retried run starts nothing more (services/engine/jobs/scheduler/scheduled-run.ts).
 *
 * Only instance ids: `$uuid()` in expressions and `uuid()` in flow functions stay random (v4), as
 * models cut short keys out of them (examples/leave-request.json's businessKey).
 */
import { randomFillSync } from 'node:crypto'
import { v7 } from 'uuid'

/**
 * The random bits, drawn for many ids at once: `uuid` left to itself asks the system for 16 bytes
 * per id (`crypto.getRandomValues`), about 2 µs alone and several times that beside a busy
 * journal thread (docs/performance.md#notification-records-as-views-of-the-instances).
 */
const IDS_PER_DRAW = 256
const pool = new Uint8Array(16 * IDS_PER_DRAW)
let drawn = pool.length

function randomBits(): Uint8Array {
  if (drawn === pool.length) {
    randomFillSync(pool)
    drawn = 0
  }
  drawn += 16
  return pool.subarray(drawn - 16, drawn)
}

/**
 * The time and counter of the last id. `uuid` keeps these only when it draws the bits itself, so
 * they are kept here as RFC 9562 has it (section 6.2, method 1): a new millisecond starts the
 * counter at a random 31-bit value, a repeated one counts up, and a counter that wraps moves the
 * time on.
 */
let lastMilliseconds = -Infinity
let counter = 0

export function newInstanceId(): string {
  const random = randomBits()
  const now = Date.now()
  if (now > lastMilliseconds) {
    lastMilliseconds = now
    counter = (((random[6] ?? 0) & 0x7f) << 24) | ((random[7] ?? 0) << 16) | ((random[8] ?? 0) << 8) | (random[9] ?? 0)
  } else {
    counter = (counter + 1) | 0
    if (counter === 0) lastMilliseconds++
  }
  return v7({ random, msecs: lastMilliseconds, seq: counter })
}
