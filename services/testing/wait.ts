/**
 * Test support: the one way tests wait for something another part of the system does in its own
 * time (workers, schedulers, streams, cache propagation): read, check, retry until a time limit.
 */
import { setTimeout as sleep } from 'node:timers/promises'

/** Reads until `done` holds or `timeoutMs` passed; resolves with the last value read either way. */
export async function waitUntil<T>(
  read: () => T | Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 5_000,
  intervalMs = 25,
): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await sleep(intervalMs)
  }
}

export interface Held {
  /** Settles once `release()` was called. */
  released: Promise<void>
  release(): void
}

/** Something that lasts exactly as long as the test says (a slow answer, a long pass): no wall-clock time stands in for it. */
export function held(): Held {
  let release = (): void => undefined
  const released = new Promise<void>((resolve) => (release = resolve))
  return { released, release }
}
