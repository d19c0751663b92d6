#!/usr/bin/env node
// @ts-check
/**
 * What the deploy-visibility check costs a request (docs/production.md "Consistency"): before a
 * read of deployed models (the engine's app functions, the gateway's served models and settings),
 * an instance reads the `cacheInvalidations` counter and polls the invalidation records only when
 * it moved. Measured on the embedded store, directly (the engine on the all-in-one's main thread)
 * and through the remote store over a MessagePort (the all-in-one's gateway thread; here both ends
 * are on one thread, so the figure leaves out the hop between threads):
 *
 * - per request while nothing was deployed: `caches.upToDate()` minus an empty await (the baseline);
 * - per deploy: the poll that applies one new record, on the first request after it.
 *
 * Target: the per-request check adds under 25 µs on the embedded store, directly.
 * Environment: BENCH_DEPLOY_VISIBILITY_ITERATIONS (default 100000 checks; a hundredth of them, at most 200, deploys).
 */
import { MessageChannel } from 'node:worker_threads'
import { importBuilt } from './support/dist.mjs'
import { reportTargets, runBench } from './support/outcome.mjs'
import { median } from './support/stats.mjs'
import { withStore, withTempDir } from './support/store.mjs'

const { InvalidationPoller, recordInvalidation } = await importBuilt('plugins/cache/invalidations.js')
const { CacheRegistry } = await importBuilt('plugins/cache/registry.js')
const { RemoteStore } = await importBuilt('store/remote/client.js')
const { serveStore } = await importBuilt('store/remote/host.js')

const ITERATIONS = Number(process.env.BENCH_DEPLOY_VISIBILITY_ITERATIONS ?? 100_000)
// Each poll re-reads the records of the last LATE_RECORD_WINDOW_MS, so deploys in a burst cost more
// each: a few hundred stand for a busy deployment day.
const DEPLOYS = Math.max(1, Math.min(200, Math.floor(ITERATIONS / 100)))
const ROUNDS = 5
const TARGET_CHECK_US = 25

/**
 * Microseconds per call of `body`, the median of ROUNDS rounds of `count` sequential calls.
 * @param {number} count @param {() => Promise<unknown>} body
 */
async function microsPerCall(count, body) {
  /** @type {number[]} */
  const rounds = []
  for (let round = 0; round < ROUNDS; round++) {
    const start = process.hrtime.bigint()
    for (let i = 0; i < count; i++) await body()
    rounds.push(Number(process.hrtime.bigint() - start) / 1000 / count)
  }
  return median(rounds)
}

/**
 * The check's cost per request and per deploy over `store`, as a gateway or engine runs it.
 * @param {any} store
 */
async function measure(store) {
  const registry = new CacheRegistry()
  registry.cache('app').set('warm', {})
  const poller = new InvalidationPoller(store, 'wfm', registry)
  await poller.skipExisting()
  registry.followInvalidations(() => poller.catchUp())
  await recordInvalidation(store, { target: 'all', cacheType: 'app', id: 'warm' })
  await registry.upToDate()

  const baseline = await microsPerCall(ITERATIONS, () => Promise.resolve())
  const check = await microsPerCall(ITERATIONS, () => registry.upToDate())
  // A deploy: its record is written (not counted), then the next request's check applies it.
  let deployUs = 0
  for (let i = 0; i < DEPLOYS; i++) {
    await recordInvalidation(store, { target: 'all', cacheType: 'app', id: `app-${i}` })
    const start = process.hrtime.bigint()
    await registry.upToDate()
    deployUs += Number(process.hrtime.bigint() - start) / 1000
  }
  return { perRequestUs: check - baseline, perDeployUs: deployUs / DEPLOYS }
}

/** @param {string} label @param {{ perRequestUs: number, perDeployUs: number }} figures */
function report(label, figures) {
  process.stdout.write(
    `  ${label}: ${figures.perRequestUs.toFixed(2)} µs per request (counter unchanged), ` +
      `${figures.perDeployUs.toFixed(1)} µs on the first request after a deploy\n`,
  )
}

await runBench(() =>
  withTempDir('bench-deploy-visibility-', async (dataDir) =>
    withStore(dataDir, async (store) => {
      const direct = await measure(store)
      const channel = new MessageChannel()
      const host = serveStore(store, channel.port1)
      const remote = await measure(new RemoteStore(channel.port2, store.kind))
      await host.close()
      channel.port1.close()
      channel.port2.close()
      process.stdout.write(`deploy visibility check, ${ITERATIONS} checks and ${DEPLOYS} deploys per store, median of ${ROUNDS} rounds\n`)
      report('embedded store, directly (engine)', direct)
      report('embedded store, remote over a MessagePort (all-in-one gateway)', remote)
      return reportTargets([
        [`the check adds under ${TARGET_CHECK_US} µs per request on the embedded store`, direct.perRequestUs < TARGET_CHECK_US],
      ])
    }),
  ),
)
