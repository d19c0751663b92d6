/**
 * Business data collections (`dataCollection` models): the registry entry that maps a tenant's
 * human-readable collection name to the physical collection, and one page of a search in it.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Filter, Projection, SortSpec, Store } from '../../../store/port.js'
import { Collections, type StoredDataCollection } from '../../../store/collections.js'
import { type Tenant, tenantFilter } from '../../../store/tenant.js'

declare module 'fastify' {
  interface FastifyInstance {
    dataCollections: DataCollectionRepository
  }
}

export interface SearchPage {
  filter: Filter
  sort?: SortSpec | undefined
  projection?: Projection | undefined
  skip: number
  limit: number
  /** How many documents the search may examine (the embedded store's scan budget). */
  maxExamined: number
}

export class DataCollectionRepository {
  constructor(private readonly store: Store) {}

  /** The tenant's collection of that name, or null (served by the gateway's unique `organizationId, appId, name` index on the registry). */
  async find(tenant: Tenant, name: string): Promise<StoredDataCollection | null> {
    return this.store.collection<StoredDataCollection>(Collections.dataCollections).findOne({ ...tenantFilter(tenant), name })
  }

  /** The matching documents of one page, and how many match in all. */
  async search(entry: StoredDataCollection, page: SearchPage): Promise<{ items: Array<Record<string, unknown>>; total: number }> {
    const collection = this.store.collection(entry.collectionName)
    const [items, total] = await Promise.all([
      collection
        .find(page.filter, {
          skip: page.skip,
          limit: page.limit,
          ...(page.sort ? { sort: page.sort } : {}),
          ...(page.projection ? { projection: page.projection } : {}),
          maxExamined: page.maxExamined,
        })
        .toArray(),
      collection.countDocuments(page.filter, { maxExamined: page.maxExamined }),
    ])
    return { items, total }
  }
}

async function dataCollectionsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('dataCollections', new DataCollectionRepository(fastify.store))
}

export default fp(dataCollectionsPlugin, { name: 'data-collections-repository', dependencies: ['store'] })
