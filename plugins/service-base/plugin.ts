/**
 * What every service of this project stands on, registered in one order for both: the store and
 * the clock, the error answers (in the envelope on the gateway), correlation of requests, their
 * traces and metrics, the JSON depth limit, the API docs, the caches and the caller's identity. A service's app registers
 * this first and then only its own repositories, services and routes.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import caches, { type CachesPluginOptions } from '../cache/plugin.js'
import clock, { type Clock } from '../clock/plugin.js'
import correlation from '../correlation/plugin.js'
import docs, { type DocsPluginOptions } from '../docs/plugin.js'
import envelope from '../errors/envelope-plugin.js'
import errors, { type ErrorsPluginOptions } from '../errors/plugin.js'
import identity, { type IdentityPluginOptions } from '../identity/plugin.js'
import jsonDepth, { type JsonDepthOptions } from '../json-depth/plugin.js'
import metrics, { type MetricsPluginOptions } from '../metrics/plugin.js'
import store from '../store/plugin.js'
import tracing, { type TracingPluginOptions } from '../tracing/plugin.js'
import type { Store } from '../../store/port.js'

export interface ServiceBaseOptions {
  /** An open store, shared with the other apps of the process; closing it is the caller's job. */
  store: Store
  /** Where every "now" comes from; the system clock when not given (tests move their own). */
  clock?: Clock | undefined
  errors: ErrorsPluginOptions
  tracing: TracingPluginOptions
  metrics: MetricsPluginOptions
  jsonDepth: JsonDepthOptions
  docs: DocsPluginOptions
  caches: CachesPluginOptions
  identity: IdentityPluginOptions
}

async function serviceBase(app: FastifyInstance, options: ServiceBaseOptions): Promise<void> {
  await app.register(store, { store: options.store })
  await app.register(clock, { clock: options.clock })
  await app.register(errors, options.errors)
  if (options.errors.style === 'envelope') await app.register(envelope)
  await app.register(correlation)
  await app.register(tracing, options.tracing)
  await app.register(metrics, options.metrics)
  await app.register(jsonDepth, options.jsonDepth)
  await app.register(docs, options.docs)
  await app.register(caches, options.caches)
  await app.register(identity, options.identity)
}

export default fp(serviceBase, { name: 'service-base', fastify: '5.x' })
