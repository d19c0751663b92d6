/**
 * Readiness probes: each dependency a service needs to serve is asked once, with a time limit, and
 * the first that does not answer is the reason the service is not ready.
 */

/** A dependency slower than this counts as unreachable: a load balancer must hear back quickly. */
export const PROBE_TIMEOUT_MS = 3_000

export interface Probe {
  /** Named in the reason (`store`, `engine`). */
  name: string
  /** Resolves when the dependency answered as it should; rejects with what went wrong. */
  check: () => Promise<void>
}

async function withinLimit(check: () => Promise<void>, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  const expired = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs)
  })
  try {
    await Promise.race([check(), expired])
  } finally {
    clearTimeout(timer)
  }
}

/** All probes run together; resolves to the names that answered, or to the reason of the first that failed. */
export async function probeAll(
  probes: readonly Probe[],
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<{ ready: true; checks: Record<string, 'ok'> } | { ready: false; reason: string }> {
  const outcomes = await Promise.allSettled(probes.map((probe) => withinLimit(probe.check, timeoutMs)))
  const checks: Record<string, 'ok'> = {}
  for (const [index, outcome] of outcomes.entries()) {
    const name = (probes[index] as Probe).name
    if (outcome.status === 'rejected') return { ready: false, reason: `${name} unreachable: ${(outcome.reason as Error).message}` }
    checks[name] = 'ok'
  }
  return { ready: true, checks }
}

/** The store answers a read (any collection will do: an empty answer is an answer). */
export function storeProbe(store: { collection(name: string): { findOne(filter: Record<string, unknown>): Promise<unknown> } }): Probe {
  return { name: 'store', check: async () => void (await store.collection('models').findOne({ _id: '__readiness__' })) }
}
