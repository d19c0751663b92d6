/**
 * The engine as one Fastify plugin, loaded in layers: external wrappers (store, errors, correlation,
 * docs), then app decorators (identity), then the domain route plugins. Only the server files build
 * Fastify itself; tests register this plugin and drive it with inject or a real port.
 */
import type { FastifyInstance } from 'fastify'
import { engineErrorCatalogue } from '../../openapi/generated/errors.js'
import type { Config } from '../../plugins/config/config.js'
import correlation from '../../plugins/correlation/plugin.js'
import docs, { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import errors from '../../plugins/errors/plugin.js'
import identity from '../../plugins/identity/plugin.js'
import store from '../../plugins/store/plugin.js'
import type { Store } from '../../plugins/store/port.js'
import health from './health/routes.js'

export interface EngineAppOptions {
  config: Config
  /** An open store shared with other apps of the process; the app does not close it. */
  store: Store
}

export default async function engineApp(app: FastifyInstance, options: EngineAppOptions): Promise<void> {
  await app.register(store, { store: options.store })
  await app.register(errors, {
    catalogue: engineErrorCatalogue,
    codes: { validation: 'wm4000', malformedBody: 'wm4001', notFound: 'wm4004', bodyTooLarge: 'wm4013', unsupportedMediaType: 'wm4015', internal: 'wm5000' },
    style: 'record',
    exposeStack: options.config.development,
  })
  await app.register(correlation)
  await app.register(docs, { document: loadOpenApiDocument('engine') })

  await app.register(identity, { unknownUserCode: 'wm4010' })

  await app.register(health)
}
