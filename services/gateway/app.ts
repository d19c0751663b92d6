/**
 * The gateway as one Fastify plugin, loaded in layers: external wrappers (store, errors in the
 * envelope style, correlation, docs), then app decorators, then the direct domain routes.
 */
import type { FastifyInstance } from 'fastify'
import { gatewayErrorCatalogue } from '../../openapi/generated/errors.js'
import type { Config } from '../../plugins/config/config.js'
import correlation from '../../plugins/correlation/plugin.js'
import docs, { loadOpenApiDocument } from '../../plugins/docs/plugin.js'
import envelope from '../../plugins/errors/envelope-plugin.js'
import errors from '../../plugins/errors/plugin.js'
import store from '../../plugins/store/plugin.js'
import type { Store } from '../../plugins/store/port.js'
import health from './health/routes.js'

export interface GatewayAppOptions {
  config: Config
  /** An open store shared with other apps of the process; the app does not close it. */
  store: Store
}

export default async function gatewayApp(app: FastifyInstance, options: GatewayAppOptions): Promise<void> {
  await app.register(store, { store: options.store })
  await app.register(errors, {
    catalogue: gatewayErrorCatalogue,
    codes: { validation: 'fm4000', malformedBody: 'fm4001', notFound: 'fm4004', bodyTooLarge: 'fm4013', unsupportedMediaType: 'fm4015', internal: 'fm5000' },
    style: 'envelope',
    exposeStack: options.config.development,
  })
  await app.register(envelope)
  await app.register(correlation)
  await app.register(docs, { document: loadOpenApiDocument('gateway') })

  await app.register(health)
}
