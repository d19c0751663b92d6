/**
 * `GET /external/cache/:cacheType/:cacheTarget/evict`: checks the combination against the allowed
 * table and records the invalidation. This gateway has applied it when it answers; every other
 * instance of the target applies it before its next read of deployed models, and within
 * CACHE_POLL_MS for every cache (plugins/cache).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { type CacheTarget, recordInvalidation } from '../../../plugins/cache/invalidations.js'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { CacheRegistry } from '../../../plugins/cache/registry.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import type { Store } from '../../../store/port.js'
import { type Tenant, tenantKey } from '../../../store/tenant.js'

declare module 'fastify' {
  interface FastifyInstance {
    cacheEviction: CacheEviction
  }
}

/** The cache types each target allows (docs/reference/gateway.md#caches). */
export const ALLOWED_CACHE_TYPES: Readonly<Record<CacheTarget, readonly string[]>> = {
  fm: ['app', 'all', 'swagger', 'endpoint'],
  wfm: ['app', 'all', 'service'],
  all: ['app', 'all', 'swagger', 'service'],
}

/** Only these types take an `id` (one cache key). */
export const KEYED_CACHE_TYPES: readonly string[] = ['service', 'swagger']

export class CacheEviction {
  constructor(
    private readonly store: Store,
    private readonly caches: CacheRegistry,
    private readonly fail: ErrorFactory<GatewayErrorCode>,
  ) {}

  /**
   * `tenantOnly`: a tenant admin's eviction, limited to its tenant — only the `app` caches, of that
   * tenant alone (the other types are shared by every tenant: 403).
   */
  async evict(cacheType: string, cacheTarget: CacheTarget, id: string | undefined, tenantOnly?: Tenant): Promise<void> {
    if (!ALLOWED_CACHE_TYPES[cacheTarget].includes(cacheType)) {
      throw this.fail('fm3030', {
        args: [`cacheType ${cacheType} is not allowed for target ${cacheTarget} (allowed: ${ALLOWED_CACHE_TYPES[cacheTarget].join(', ')})`],
        parameters: { field: 'params.cacheType' },
      })
    }
    if (id !== undefined && !KEYED_CACHE_TYPES.includes(cacheType)) {
      throw this.fail('fm3030', {
        args: [`id is valid only with cacheType ${KEYED_CACHE_TYPES.join(' or ')}`],
        parameters: { field: 'query.id' },
      })
    }
    if (tenantOnly !== undefined) {
      if (cacheType !== 'app')
        throw this.fail('fm4030', {
          args: [`a tenant admin evicts only its app's caches (cacheType app), not ${cacheType}`],
          parameters: { field: 'params.cacheType' },
        })
      await recordInvalidation(this.store, { target: cacheTarget, cacheType, id: tenantKey(tenantOnly) })
    } else {
      await recordInvalidation(this.store, { target: cacheTarget, cacheType, ...(id === undefined ? {} : { id }) })
    }
    // The caller's next request may come back to this gateway: it sees the eviction done.
    await this.caches.upToDate()
  }
}

async function cacheEvictionPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('cacheEviction', new CacheEviction(fastify.store, fastify.caches, fastify.fail))
}

export default fp(cacheEvictionPlugin, { name: 'cache-eviction', dependencies: ['store', 'caches', 'errors'] })
