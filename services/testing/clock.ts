/** Test support: a clock the test moves forward, for the engine's `clock` option (plugins/clock). */
import type { Clock } from '../../plugins/clock/plugin.js'

export interface TestClock {
  /** What the engine reads. */
  now: Clock
  /** Moves the time forward by `ms`; answers the new time. */
  advance(ms: number): Date
  /** Moves the time to `at`. */
  set(at: Date | string): Date
}

export function testClock(start: Date | string): TestClock {
  let current = new Date(start).getTime()
  return {
    now: () => new Date(current),
    advance(ms) {
      current += ms
      return new Date(current)
    },
    set(at) {
      current = new Date(at).getTime()
      return new Date(current)
    },
  }
}
