/**
 * The Fastify options both services are built with (in production and in tests): request ids,
 * per-request loggers, body limit, timeouts and the validator's behaviour.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import type {} from '../errors/plugin.js'
import { requestIdFrom } from '../correlation/trace-context.js'
import { requestLoggerFactory } from '../logging/logger.js'
import { serializerPerSchema } from './serializer-per-schema.js'

export const BODY_LIMIT_BYTES = 1024 * 1024

/** The largest `fields` part of a multipart upload. */
export const UPLOAD_FIELDS_BYTES = 64 * 1024
/** Room for the multipart framing around the file: boundaries and part headers. */
const MULTIPART_FRAMING_BYTES = 64 * 1024

/** The largest upload body: a file of MAX_UPLOAD_BYTES with its `fields` part and framing. */
export function uploadBodyLimit(maxUploadBytes: number): number {
  return maxUploadBytes + UPLOAD_FIELDS_BYTES + MULTIPART_FRAMING_BYTES
}

export function serverOptions(logger: FastifyBaseLogger): FastifyServerOptions & { loggerInstance: FastifyBaseLogger } {
  return {
    loggerInstance: logger,
    genReqId: (request) => requestIdFrom(request.headers['x-request-id']),
    childLoggerFactory: requestLoggerFactory,
    bodyLimit: BODY_LIMIT_BYTES,
    // No limit on how long a plugin takes to start: the first start after an upgrade may build an
    // index over a long history (the embedded store reads every ended instance once, about a minute
    // per million: docs/upgrading.md), and cutting it short would only make the next start redo it.
    pluginTimeout: 0,
    connectionTimeout: 0,
    keepAliveTimeout: 72_000,
    requestTimeout: 330_000,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // A URL the router refuses (bad percent-encoding, an over-long path parameter) gets the service's
    // error answer, with a catalogue code, like every other bad input (errors plugin).
    frameworkErrors: (error, request, reply) => request.server.answerError(error, request, reply),
    schemaController: { compilersFactory: { buildSerializer: serializerPerSchema() } },
    ajv: {
      customOptions: {
        // Unknown fields are ignored and never stored: bodies declare additionalProperties: false.
        removeAdditional: true,
        coerceTypes: 'array',
        useDefaults: true,
        allErrors: false,
      },
    },
  }
}
