/**
 * Swagger UI at /docs and the document at /docs/json, served from the bundled OpenAPI document the
 * generator wrote (the contract itself, not one rebuilt from the routes).
 */
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import { generatedOpenapiDir } from '../../lib/server/paths.js'

export type OpenApiDocument = Record<string, unknown> & { paths?: Record<string, Record<string, unknown>> }

export function loadOpenApiDocument(service: 'engine' | 'gateway'): OpenApiDocument {
  return JSON.parse(readFileSync(join(generatedOpenapiDir, `${service}.openapi.json`), 'utf8')) as OpenApiDocument
}

/**
 * The one style element Swagger UI's bundle adds to the page at run time, allowed by its hash (the
 * page's policy allows no other inline style or script). A Swagger UI upgrade that changes it makes
 * the browser test (services/gateway/docs-ui.test.ts) fail with the new hash in the console error.
 */
const SWAGGER_UI_STYLE_HASH = 'sha256-RL3ie0nH+Lzz2YNqQN83mnU0J1ot4QL7b99vMdIX99w='

export interface DocsPluginOptions {
  document: OpenApiDocument
  /**
   * The document to serve on each request, when it can change while the service runs (the
   * gateway's `swagger` cache, re-read after an eviction); default: `document` as loaded.
   */
  current?: () => OpenApiDocument
}

async function docsPlugin(fastify: FastifyInstance, options: DocsPluginOptions): Promise<void> {
  await fastify.register(swagger, { mode: 'static', specification: { document: options.document as never } })
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true },
    staticCSP: true,
    transformStaticCSP: (header: string) => `${header} style-src-elem 'self' https: '${SWAGGER_UI_STYLE_HASH}';`,
    ...(options.current ? { transformSpecification: options.current, transformSpecificationClone: false } : {}),
  })
}

export default fp(docsPlugin, { name: 'docs', fastify: '5.x' })
