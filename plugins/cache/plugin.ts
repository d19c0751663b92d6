/**
 * `fastify.caches`: the instance's named caches (gateway `fm`: app, swagger, endpoint; engine
 * `wfm`: app, service), kept honest across instances by the invalidation records, each applied
 * once: before a read of deployed models (`caches.upToDate()`: one read of the invalidation
 * counter, and a poll only when it moved), and every CACHE_POLL_MS (default 1 s) for the rest.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { ensureInvalidationIndexes, InvalidationPoller } from './invalidations.js'
import { CacheRegistry } from './registry.js'

declare module 'fastify' {
  interface FastifyInstance {
    caches: CacheRegistry
  }
}

export interface CachesPluginOptions {
  /** Which service this instance is: `fm` (gateway) or `wfm` (engine). */
  target: 'fm' | 'wfm'
  /** The cache types the service has; they exist from the start, empty. */
  types: readonly string[]
  pollMs: number
}

async function cachesPlugin(fastify: FastifyInstance, options: CachesPluginOptions): Promise<void> {
  const registry = new CacheRegistry()
  for (const type of options.types) registry.cache(type)
  fastify.decorate('caches', registry)

  await ensureInvalidationIndexes(fastify.store)
  const poller = new InvalidationPoller(fastify.store, options.target, registry)
  await poller.skipExisting()
  registry.followInvalidations(() => poller.catchUp())

  let timer: NodeJS.Timeout | undefined
  let inFlight: Promise<void> | undefined
  let closed = false
  // Each poll is scheduled when the previous one ended, so polls never overlap.
  const schedule = (): void => {
    if (closed) return
    timer = setTimeout(() => {
      inFlight = poller
        .poll()
        .then(
          (applied) => {
            if (applied > 0) fastify.log.info({ applied }, 'cache invalidations applied')
          },
          (error: unknown) => fastify.log.warn({ err: error }, 'cannot read cache invalidations'),
        )
        .finally(schedule)
    }, options.pollMs)
    timer.unref()
  }
  fastify.addHook('onReady', async () => schedule())
  fastify.addHook('onClose', async () => {
    closed = true
    clearTimeout(timer)
    await inFlight
  })
}

export default fp(cachesPlugin, { name: 'caches', fastify: '5.x', dependencies: ['store'] })
