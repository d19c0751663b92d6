/**
 * The one central error handler of a service: every failure, ours or Fastify's, leaves as an
 * ICustomError record (engine) or inside the envelope (gateway), with a catalogue code. Bad input is
 * always a 4xx, never a 500; a 500 never shows server internals (stack only in development).
 */
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { ErrorCode } from '../../openapi/generated/errors.js'
import { type CustomErrorRecord, errorEnvelope } from './envelope.js'
import { type ErrorCatalogue, type ErrorFactory, errorFactory, isServiceError, type ServiceError } from './service-error.js'

/**
 * Catalogue codes for the failures that every service can answer (a service checks its own: `satisfies
 * GenericErrorCodes<EngineErrorCode>`).
 */
export interface GenericErrorCodes<Code extends string = string> {
  validation: Code
  malformedBody: Code
  notFound: Code
  bodyTooLarge: Code
  unsupportedMediaType: Code
  internal: Code
}

export interface ErrorsPluginOptions {
  catalogue: ErrorCatalogue
  codes: GenericErrorCodes
  /** 'record': answer ICustomError records (engine); 'envelope': wrap them in the envelope (gateway). */
  style: 'record' | 'envelope'
  /** Show stacks in answers (NODE_ENV=development only). */
  exposeStack: boolean
}

declare module 'fastify' {
  interface FastifyInstance {
    /**
     * Builds a ServiceError from the service's catalogue: `throw fastify.fail('wm3090')`. Typed with
     * every catalogue's codes (both services share this declaration); a service's own code narrows
     * it to its codes, `ErrorFactory<EngineErrorCode>` or `ErrorFactory<GatewayErrorCode>`.
     */
    fail: ErrorFactory<ErrorCode>
    /**
     * Answers a failure as the error handler does. The router's own refusals (a malformed URL, a
     * path parameter past `maxParamLength`) happen before any route, where Fastify calls the
     * `frameworkErrors` server option instead of the error handler; that option calls this.
     */
    answerError: (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => FastifyReply
  }
}

const MALFORMED_BODY = new Set(['FST_ERR_CTP_INVALID_JSON_BODY', 'FST_ERR_CTP_EMPTY_JSON_BODY', 'FST_ERR_CTP_INVALID_CONTENT_LENGTH'])
/** The router's refusals of a URL: bad input like any other, answered 400 (414 is not in the documents). */
const BAD_URL = new Set(['FST_ERR_BAD_URL', 'FST_ERR_MAX_PARAM_LENGTH'])

/** Names the offending field of a validation failure: `body.processId`, `headers.user`, ... */
function describeValidation(error: FastifyError): { field: string; message: string } {
  const [first] = error.validation ?? []
  const context = error.validationContext ?? 'body'
  const missing = (first?.params as { missingProperty?: string } | undefined)?.missingProperty
  const path = (first?.instancePath ?? '').split('/').filter(Boolean)
  if (missing) path.push(missing)
  const field = [context, ...path].join('.')
  const problem = missing ? 'is required' : (first?.message ?? 'is invalid')
  return { field, message: `${field} ${problem}` }
}

async function errorsPlugin(fastify: FastifyInstance, options: ErrorsPluginOptions): Promise<void> {
  const fail = errorFactory(options.catalogue)
  const { codes } = options
  fastify.decorate('fail', fail)

  function normalise(error: FastifyError): ServiceError {
    if (isServiceError(error)) return error
    if (error.validation) {
      const { field, message } = describeValidation(error)
      return fail(codes.validation, { args: [message], parameters: { field } })
    }
    if (error.code && MALFORMED_BODY.has(error.code)) return fail(codes.malformedBody, { cause: error })
    if (error.code && BAD_URL.has(error.code))
      return fail(codes.validation, { args: [`the URL: ${error.message.slice(0, 200)}`], cause: error })
    const status = error.statusCode ?? 500
    if (status === 413) return fail(codes.bodyTooLarge, { cause: error })
    if (status === 415) return fail(codes.unsupportedMediaType, { cause: error })
    if (status === 404) return fail(codes.notFound, { args: [error.message], cause: error })
    if (status >= 400 && status < 500) {
      const normalised = fail(codes.validation, { args: [error.message], cause: error })
      normalised.statusCode = status
      return normalised
    }
    return fail(codes.internal, { cause: error })
  }

  function send(reply: FastifyReply, error: ServiceError, original: Error): FastifyReply {
    const record: CustomErrorRecord = {
      statusCode: error.statusCode,
      type: error.type,
      category: error.category,
      message: error.message,
      code: error.code,
    }
    if (error.summary) record.summary = error.summary
    if (error.parameters) record.parameters = error.parameters
    if (error.detail) record.detail = error.detail
    if (options.exposeStack && original.stack) record.stack = original.stack
    return reply
      .code(error.statusCode)
      .type('application/json; charset=utf-8')
      .send(options.style === 'envelope' ? errorEnvelope(record) : record)
  }

  function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
    const normalised = normalise(error)
    if (normalised.statusCode >= 500) request.log.error({ err: error }, 'request failed')
    else request.log.info({ code: normalised.code, statusCode: normalised.statusCode }, normalised.message)
    return send(reply, normalised, error)
  }
  fastify.decorate('answerError', answerError)
  fastify.setErrorHandler(answerError)

  fastify.setNotFoundHandler((request: FastifyRequest, reply: FastifyReply) => {
    const error = fail(codes.notFound, { args: [`${request.method} ${request.url.split('?')[0]}`] })
    return send(reply, error, error)
  })
}

export default fp(errorsPlugin, { name: 'errors', fastify: '5.x' })
