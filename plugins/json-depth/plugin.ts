/**
 * JSON bodies nested deeper than MAX_JSON_DEPTH are refused (400) while they arrive, before they
 * are parsed, validated or handled: parsing, schema validation and every recursive walk of the
 * service then only ever see bounded nesting. The check is a preParsing stage of the service's own
 * routes (the gateway's proxied routes stream their bodies to the engine, which checks them).
 */
import { Transform, type TransformCallback } from 'node:stream'
import type { FastifyInstance, FastifyRequest, preParsingHookHandler } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorCode } from '../../openapi/generated/errors.js'
import { JsonDepthScanner } from './scanner.js'

export interface JsonDepthOptions {
  /** MAX_JSON_DEPTH: the deepest nesting of arrays and objects allowed. */
  maxDepth: number
  /** Catalogue code answered (400) for a body nested deeper. */
  code: ErrorCode
}

/** `application/json` and the `+json` types: the bodies Fastify parses as JSON. */
export function isJsonContentType(contentType: string | undefined): boolean {
  if (contentType === undefined) return false
  const type = contentType.split(';', 1)[0]!.trim().toLowerCase()
  return type === 'application/json' || type.endsWith('+json')
}

async function jsonDepthPlugin(fastify: FastifyInstance, options: JsonDepthOptions): Promise<void> {
  const tooDeep = () =>
    fastify.fail(options.code, { args: [String(options.maxDepth)], parameters: { field: 'body', maxDepth: String(options.maxDepth) } })

  // Callback style on purpose: Fastify then starts reading the returned stream in the same tick,
  // so its error listener is in place before the first chunk can flow through the scan.
  const check: preParsingHookHandler = (request: FastifyRequest, _reply, payload, done) => {
    if (!isJsonContentType(request.headers['content-type'])) return done(null, payload)
    const scanner = new JsonDepthScanner(options.maxDepth)
    let refused = false
    const scanned = new Transform({
      transform(chunk: Buffer, _encoding, callback: TransformCallback) {
        if (refused) return callback()
        if (scanner.push(chunk)) return callback(null, chunk)
        refused = true
        callback(tooDeep())
      },
    })
    // A route that never reads its body must not turn the refusal into an uncaught error.
    scanned.on('error', () => undefined)
    payload.on('error', (error) => scanned.destroy(error))
    done(null, payload.pipe(scanned))
  }

  // Added to the service's own routes as each is registered (as the admin token check is).
  fastify.addHook('onRoute', (route) => {
    if (!route.config?.operationId) return
    const own = route.preParsing === undefined ? [] : Array.isArray(route.preParsing) ? route.preParsing : [route.preParsing]
    route.preParsing = [...own, check]
  })
}

export default fp(jsonDepthPlugin, { name: 'json-depth', fastify: '5.x', dependencies: ['errors'] })
