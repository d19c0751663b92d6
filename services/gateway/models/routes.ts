/**
 * `POST /model/insertModel` and `GET /model/getModel/:id`. The model fetch answers the raw body
 * with its caching headers (docs/reference/gateway.md#models), 304 for a matching `if-none-match`, compressed when the
 * client accepts it (its own scope, so no other route is compressed).
 */
import compress from '@fastify/compress'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { GatewayErrorCode } from '../../../openapi/generated/errors.js'
import type { ErrorFactory } from '../../../plugins/errors/service-error.js'
import { getModel, getModelBpmn, insertModel } from '../../../openapi/generated/gateway-routes.js'
import { routeFrom } from '../../../lib/server/route.js'
import { namesOtherTenant, readerOf } from '../users/reader.js'
import type { TenantScope } from '../users/repository.js'
import { type Tenant, tenantKey } from '../../../store/tenant.js'
import { ExportCache } from './bpmn/export.js'
import { ExportRefused } from './bpmn/isolated.js'
import type { ProcessBodyLike } from './bpmn/semantic.js'
import { etagMatches, type ServedModel } from './service.js'

export const MODEL_CACHE_CONTROL = 'public, max-age=28800'

async function modelRoutes(fastify: FastifyInstance): Promise<void> {
  const fail: ErrorFactory<GatewayErrorCode> = fastify.fail
  fastify.withTypeProvider<TypeBoxTypeProvider>().route({
    ...routeFrom(insertModel),
    handler: async (request, reply) => {
      // A tenant admin deploys only into its own tenant, whichever of the model or the body names it.
      const { model } = request.body
      const tenant = fastify.adminTenantOf(
        request,
        { organizationId: model.organizationId ?? request.body.organizationId, appId: model.appId ?? request.body.appId },
        'body.model',
      )
      return reply.envelope(
        await fastify.modelService.insert(tenant ? { ...request.body, ...tenant, model: { ...model, ...tenant } } : request.body),
      )
    },
  })

  /**
   * The tenant whose model a fetch may see: the user's own (another tenant's model is not found),
   * the one the query names with the admin token (or the only one with that model id); to nobody
   * else (401), as models hold the tenant's function definitions.
   */
  async function tenantToServe(request: FastifyRequest, asked: TenantScope, modelID: string): Promise<Tenant | null> {
    const reader = readerOf(fastify, request)
    if (reader.kind === 'anonymous')
      throw fail('fm4012', { args: ['a user or the admin token is required to fetch a model'], parameters: { field: 'headers.user' } })
    if (reader.kind === 'user') return namesOtherTenant(reader.tenant, asked) ? null : reader.tenant
    if (asked.organizationId && asked.appId) return { organizationId: asked.organizationId, appId: asked.appId }
    return fastify.modelService.tenantOfModel(modelID, asked)
  }

  /** The model a fetch asks for, as its tenant's reader may see it; 404 when there is none (or it is not `process`, for `only`). */
  async function modelToServe(
    request: FastifyRequest,
    modelID: string,
    asked: TenantScope,
    only?: 'process',
  ): Promise<{ tenant: Tenant; model: ServedModel }> {
    const tenant = await tenantToServe(request, asked, modelID)
    const model = tenant ? await fastify.modelService.served(tenant, modelID) : null
    if (!tenant || !model || (only !== undefined && model.type !== only)) {
      const what = `${only === undefined ? 'model' : `${only} model`} ${modelID}`
      throw fail('fm3027', { args: [`${what}${tenant ? ` in app ${tenant.appId}` : ''}`], parameters: { field: 'params.id' } })
    }
    return { tenant, model }
  }

  const bpmnExports = new ExportCache()

  await fastify.register(async (scope) => {
    await scope.register(compress, { global: true, encodings: ['br', 'gzip', 'deflate'] })
    scope.withTypeProvider<TypeBoxTypeProvider>().route({
      ...routeFrom(getModel),
      handler: async (request, reply) => {
        const { model } = await modelToServe(request, request.params.id, request.query)
        // x-raw: the success answers are not the documented (error) schemas, so they go untyped.
        const raw: FastifyReply = reply
          .header('etag', model.etag)
          .header('cache-control', MODEL_CACHE_CONTROL)
          .header('vary', 'Accept-Encoding')
        if (etagMatches(request.headers['if-none-match'], model.etag)) return raw.code(304).send()
        return raw.type('application/json; charset=utf-8').send(model.body)
      },
    })
    scope.withTypeProvider<TypeBoxTypeProvider>().route({
      ...routeFrom(getModelBpmn),
      handler: async (request, reply) => {
        const modelID = request.params.id
        const { tenant, model } = await modelToServe(request, modelID, request.query, 'process')
        const body = JSON.parse(model.body.toString('utf8')) as ProcessBodyLike
        const xml = await bpmnExports.get(`${tenantKey(tenant)} ${model.etag}`, modelID, body).catch((error: unknown) => {
          if (error instanceof ExportRefused) throw fail('wm3160', { args: [modelID, error.message], parameters: { field: 'params.id' } })
          throw error
        })
        // x-raw: the success answer is XML, not the documented (error) schemas, so it goes untyped.
        const raw: FastifyReply = reply.header('content-disposition', `inline; filename="${modelID}.bpmn"`)
        return raw.type('application/xml; charset=utf-8').send(xml)
      },
    })
  })
}

export default fp(modelRoutes, { name: 'model-routes', dependencies: ['model-service', 'envelope', 'errors', 'identity'] })
