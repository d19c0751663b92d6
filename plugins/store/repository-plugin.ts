/**
 * A repository as a Fastify plugin: built from the app's store (and clock, where it needs one), its indexes ensured before the app
 * serves a request, decorated under one name. Every repository registers through this, so each
 * file says only what is its own: how the repository is built, its decorator, what it needs.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

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
  /** Builds the repository from what the app is decorated with (its store, its clock…). */
  create: (fastify: FastifyInstance, options: Options) => IndexedRepository,
  meta: RepositoryPluginMeta,
): FastifyPluginAsync<Options> {
  const plugin: FastifyPluginAsync<Options> = async (fastify, options) => {
    const repository = create(fastify, options)
    await repository.ensureIndexes()
    fastify.decorate(decorator, repository)
  }
  return fp(plugin, { name: meta.name, dependencies: ['store', ...(meta.dependencies ?? [])] })
}
