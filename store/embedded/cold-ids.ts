/**
 * Which ids a collection's cold documents may have, held in memory, so that the store's thread reads
 * SQLite for an id only when a cold document may hold it (cold-file.ts). Every insert asks whether
 * its `_id` is a cold document's, and nearly every one is a new id: without the filter that question
 * was an SQLite read on the thread that serves requests, dearer the larger the file grows.
 *
 * A Bloom filter (the `bloomfilter` package) answers "certainly not" or "maybe"; a maybe is then read
 * from SQLite, so a false positive costs one read and never a wrong answer. Ids are only added: an id
 * whose cold document was deleted or became hot again stays a maybe. The filter grows in stages, each
 * twice the capacity of the one before, so it never has to be rebuilt from the file.
 */
import { BloomFilter } from 'bloomfilter'

/** False positives per stage, at its capacity: one id in a hundred that no cold document holds is read. */
const FALSE_POSITIVE_RATE = 0.01
const HASHES = Math.round(-Math.log2(FALSE_POSITIVE_RATE))
const BITS_PER_ID = -Math.log(FALSE_POSITIVE_RATE) / Math.LN2 ** 2
const SMALLEST_STAGE = 1 << 16

interface Stage {
  filter: BloomFilter
  capacity: number
  added: number
}

export class ColdIdFilter {
  private readonly stages: Stage[] = []

  /** `expected`: how many ids the first stage holds at its rate of false positives (the cold ids known at open, with room to grow). */
  constructor(expected = 0) {
    this.addStage(Math.max(SMALLEST_STAGE, 2 * expected))
  }

  add(id: string): void {
    let stage = this.stages[this.stages.length - 1] as Stage
    if (stage.added >= stage.capacity) stage = this.addStage(2 * stage.capacity)
    stage.filter.add(id)
    stage.added++
  }

  /** False when no cold document has this id; true when one may. */
  mayHold(id: string): boolean {
    return this.stages.some((stage) => stage.filter.test(id))
  }

  private addStage(capacity: number): Stage {
    const stage = { filter: new BloomFilter(Math.ceil(capacity * BITS_PER_ID), HASHES), capacity, added: 0 }
    this.stages.push(stage)
    return stage
  }
}
