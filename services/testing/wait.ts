/** Test support: polling for something another part of the system does in its own time (workers, schedulers). */
import { setTimeout as sleep } from 'node:timers/promises'

/** Reads until `done` holds or `timeoutMs` passed; resolves with the last value read either way. */
export async function waitUntil<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value) || Date.now() > deadline) return value
    await sleep(25)
  }
}
