/**
 * JSON bodies nested deeper than MAX_JSON_DEPTH are refused (400) before they are parsed, validated
 * or handled: parsing, schema validation and every recursive walk of the service then only ever see
 * bounded nesting. The check is one pass over the body's bytes inside the service's JSON parser,
 * which then parses it as Fastify's own parser does (the gateway's proxied routes have no parser:
 * they stream their bodies to the engine, which checks them). A body is at most the route's body
 * limit, so reading it whole before the scan costs no more than the parse would have.
 */
import type { FastifyInstance } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorCode } from '../../openapi/generated/errors.js'
import { nestsDeeperThan } from './scanner.js'

export interface JsonDepthOptions {
  /** MAX_JSON_DEPTH: the deepest nesting of arrays and objects allowed. */
  maxDepth: number
  /** Catalogue code answered (400) for a body nested deeper. */
  code: ErrorCode
}

const JSON_CONTENT_TYPE = 'application/json'

async function jsonDepthPlugin(fastify: FastifyInstance, options: JsonDepthOptions): Promise<void> {
  const tooDeep = () =>
    fastify.fail(options.code, { args: [String(options.maxDepth)], parameters: { field: 'body', maxDepth: String(options.maxDepth) } })
  const { onProtoPoisoning, onConstructorPoisoning } = fastify.initialConfig
  const parseJson = fastify.getDefaultJsonParser(onProtoPoisoning ?? 'error', onConstructorPoisoning ?? 'error')

  // Replaces Fastify's JSON parser in this scope and the ones registered after it (a scope that
  // removes its parsers, as the gateway's proxy does, keeps neither).
  fastify.removeContentTypeParser(JSON_CONTENT_TYPE)
  // As bytes: the scan reads them as they are, and they are decoded once, for the parse (read as a
  // string, the body would be encoded back to bytes for the scan).
  fastify.addContentTypeParser(JSON_CONTENT_TYPE, { parseAs: 'buffer' }, (request, body, done) => {
    const bytes = body as Buffer
    if (nestsDeeperThan(bytes, options.maxDepth)) return done(tooDeep(), undefined)
    parseJson(request, bytes.toString('utf8'), done)
  })
}

export default fp(jsonDepthPlugin, { name: 'json-depth', fastify: '5.x', dependencies: ['errors'] })
