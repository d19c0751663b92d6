/** Reads application constants (`constants`, `_id` = `<appId>:<name>`, written by the gateway's insertModel). */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { Collection, Store } from '../../../store/port.js'
import { Collections, type StoredConstant } from '../../../store/collections.js'

declare module 'fastify' {
  interface FastifyInstance {
    constants: ConstantRepository
  }
}

export class ConstantRepository {
  constructor(private readonly collection: Collection<StoredConstant>) {}

  /**
   * The value of `constantId` when it is a constant of `appId` (DESIGN.md §6: absent when not found
   * or when the id's app is another one).
   */
  async valueOf(appId: string, constantId: string): Promise<string | undefined> {
    if (!constantId.startsWith(`${appId}:`)) return undefined
    const found = await this.collection.findOne({ _id: constantId })
    return found?.appId === appId ? found.value : undefined
  }
}

export function constantRepository(store: Store): ConstantRepository {
  return new ConstantRepository(store.collection<StoredConstant>(Collections.constants))
}

async function constantsPlugin(fastify: FastifyInstance): Promise<void> {
  fastify.decorate('constants', constantRepository(fastify.store))
}

export default fp(constantsPlugin, { name: 'constants-repository', dependencies: ['store'] })
