/**
 * The engine's repositories and services as its domain services take them, read off the app's
 * decorators in one place. Each domain service declares the part it needs (its dependencies
 * interface); handing it this whole set keeps the route plugins free of the same list, written
 * out again in each.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'

/**
 * The plugins (fastify-plugin names) that decorate the app with what engineDependencies reads: a
 * plugin calling it lists them among its `dependencies`, so the app registers it after them.
 */
export const ENGINE_DEPENDENCY_PLUGINS = [
  'process-models',
  'process-instances',
  'contexts-repository',
  'run-environments',
  'authorization',
  'task-locks-repository',
  'sessions',
  'process-starter',
  'activities-repository',
  'caches',
  'store',
  'errors',
  'clock',
] as const

export function engineDependencies(fastify: FastifyInstance) {
  return {
    models: fastify.processModels,
    instances: fastify.processInstances,
    contexts: fastify.contexts,
    environments: fastify.runEnvironments,
    authorization: fastify.authorization,
    locks: fastify.taskLocks,
    sessions: fastify.sessions,
    starter: fastify.processStarter,
    activities: fastify.activities,
    caches: fastify.caches,
    store: fastify.store,
    log: fastify.log,
    fail: fastify.fail,
    now: fastify.clock,
  }
}

export type EngineDependencies = ReturnType<typeof engineDependencies>

/**
 * The plugin that decorates the app with one domain service built from the engine's dependencies,
 * named `name` and registered after the plugins those come from. The service's file declares the
 * decorator's type on FastifyInstance.
 */
export function engineServicePlugin(
  name: string,
  decorator: string,
  build: (dependencies: EngineDependencies) => object,
): FastifyPluginAsync {
  const plugin: FastifyPluginAsync = async (fastify) => {
    fastify.decorate<object>(decorator, build(engineDependencies(fastify)))
  }
  return fp(plugin, { name, dependencies: [...ENGINE_DEPENDENCY_PLUGINS] })
}
