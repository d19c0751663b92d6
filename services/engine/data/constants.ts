/**
 * Reads application constants (`constants`, written by the gateway's insertModel). The API names a
 * constant `<appId>:<name>`; it is looked up in the caller's tenant (organization and app), stored
 * as `<tenantKey>:<name>` (store/tenant.ts).
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Collection, Store } from '../../../store/port.js'
import { Collections, type StoredConstant } from '../../../store/collections.js'
import { constantDocumentId, type Tenant, tenantFilter } from '../../../store/tenant.js'

declare module 'fastify' {
  interface FastifyInstance {
    constants: ConstantRepository
  }
}

export class ConstantRepository {
  constructor(private readonly collection: Collection<StoredConstant>) {}

  /**
   * The value of `constantId` (`<appId>:<name>`) when it is a constant of the tenant: absent when not
   * found or when the id's app is another one.
   */
  async valueOf(tenant: Tenant, constantId: string): Promise<string | undefined> {
    const prefix = `${tenant.appId}:`
    if (!constantId.startsWith(prefix)) return undefined
    const found = await this.collection.findOne({
      _id: constantDocumentId(tenant, constantId.slice(prefix.length)),
      ...tenantFilter(tenant),
    })
    return found?.value
  }
}

export function constantRepository(store: Store): ConstantRepository {
  return new ConstantRepository(store.collection<StoredConstant>(Collections.constants))
}

async function constantsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('constants', constantRepository(fastify.store))
}

export default fp(constantsPlugin, { name: 'constants-repository', dependencies: ['store'] })
