/**
 * A repository as a Fastify plugin: built from the store, its indexes ensured before the app
 * serves a request, decorated under one name. Every repository registers through this, so each
 * file says only what is its own: how the repository is built, its decorator, what it needs.
 */
import type { FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import type { Store } from '../../store/port.js'

export interface IndexedRepository {
  ensureIndexes(): Promise<void>
}

export interface RepositoryPluginMeta {
  /** The plugin's name, which other plugins list as a dependency. */
  name: string
  /** Plugins this one needs besides `store`. */
  dependencies?: string[]
}

export function repositoryPlugin<Options extends object = Record<never, never>>(
  decorator: string,
  create: (store: Store, options: Options) => IndexedRepository,
  meta: RepositoryPluginMeta,
): FastifyPluginAsync<Options> {
  const plugin: FastifyPluginAsync<Options> = async (fastify, options) => {
    const repository = create(fastify.store, options)
    await repository.ensureIndexes()
    fastify.decorate(decorator, repository)
  }
  return fp(plugin, { name: meta.name, dependencies: ['store', ...(meta.dependencies ?? [])] })
}
