/**
 * Test support: a worker that keeps failing (batch jobs, webhook deliveries) is driven through its
 * retries on a test clock, checking that each try is made when due and not a millisecond earlier.
 */
import type { Test } from 'tap'
import type { TestClock } from './clock.js'

export interface FailingWorker {
  /** Makes the tries that are due; answers how many. */
  runDue(): Promise<number>
}

/**
 * Makes tries 1 to `lastTry - 1` of the one due record. After each, `afterTry` checks the stored
 * record and answers when its next try is due. Answers the waits between the tries.
 */
export async function retryWaits(
  t: Test,
  worker: FailingWorker,
  clock: TestClock,
  lastTry: number,
  afterTry: (attempt: number) => Promise<Date>,
): Promise<number[]> {
  const waits: number[] = []
  for (let attempt = 1; attempt < lastTry; attempt++) {
    t.equal(await worker.runDue(), 1, `try ${attempt} is made when due`)
    const wait = (await afterTry(attempt)).getTime() - clock.now().getTime()
    waits.push(wait)
    clock.advance(wait - 1)
    t.equal(await worker.runDue(), 0, `try ${attempt + 1} is not made a millisecond early`)
    clock.advance(1)
  }
  return waits
}
