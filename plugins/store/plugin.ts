/**
 * Decorates `fastify.store`. Given an open store (the all-in-one process shares one between the
 * gateway and the engine) it leaves closing to its owner; given configuration it opens the store
 * itself and closes it when the app closes.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { openStore, type OpenStoreOptions } from '../../store/open.js'
import type { Store } from '../../store/port.js'

declare module 'fastify' {
  interface FastifyInstance {
    store: Store
  }
}

export type StorePluginOptions = { store: Store } | Omit<OpenStoreOptions, 'logger'>

async function storePlugin(fastify: FastifyInstance, options: StorePluginOptions): Promise<void> {
  if ('store' in options) {
    fastify.decorate('store', options.store)
    return
  }
  const store = await openStore({ ...options, logger: fastify.log })
  fastify.decorate('store', store)
  fastify.addHook('onClose', async () => {
    await store.close()
  })
}

export default fp(storePlugin, { name: 'store', fastify: '5.x' })
