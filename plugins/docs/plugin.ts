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
import { generatedOpenapiDir } from '../server/paths.js'

export type OpenApiDocument = Record<string, unknown> & { paths?: Record<string, Record<string, unknown>> }

export function loadOpenApiDocument(service: 'engine' | 'gateway'): OpenApiDocument {
  return JSON.parse(readFileSync(join(generatedOpenapiDir, `${service}.openapi.json`), 'utf8')) as OpenApiDocument
}

export interface DocsPluginOptions {
  document: OpenApiDocument
}

async function docsPlugin(fastify: FastifyInstance, options: DocsPluginOptions): Promise<void> {
  await fastify.register(swagger, { mode: 'static', specification: { document: options.document as never } })
  await fastify.register(swaggerUi, {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true, tryItOutEnabled: true },
    staticCSP: true,
  })
}

export default fp(docsPlugin, { name: 'docs', fastify: '5.x' })
