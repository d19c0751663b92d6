import Fastify from 'fastify'
import pino from 'pino'
import t from 'tap'
import { serializerPerSchema } from './serializer-per-schema.js'
import { serverOptions } from './server-options.js'

const envelope = {
  type: 'object',
  required: ['statusCode', 'message'],
  properties: { statusCode: { type: 'integer' }, message: { type: 'string' } },
}

t.test('routes and status codes answered with one schema object share one serializer; another schema gets its own', async (t) => {
  const compile = serializerPerSchema()({}, {})
  const notFound = compile({ schema: envelope, method: 'GET', url: '/a', httpStatus: '404' })
  t.equal(compile({ schema: envelope, method: 'POST', url: '/b', httpStatus: '400' }), notFound, 'the same serializer')
  const sameTextOtherObject = compile({ schema: structuredClone(envelope), method: 'GET', url: '/a', httpStatus: '409' })
  t.not(sameTextOtherObject, notFound, 'keyed by the schema object')
  const other = compile({ schema: { type: 'object', properties: { id: { type: 'string' } } }, method: 'GET', url: '/a', httpStatus: '200' })
  t.equal(other({ id: 'x', secret: 'y' }), '{"id":"x"}', "a schema's own serializer: only its properties")
  t.equal(notFound({ statusCode: 404, message: 'gone', extra: 1 }), '{"statusCode":404,"message":"gone"}')
})

t.test('the services serialize every route and status code through it, each answer by its own schema', async (t) => {
  const app = Fastify(serverOptions(pino({ level: 'silent' })))
  t.teardown(() => app.close())
  const error = { 400: envelope, 404: envelope }
  app.get('/a', { schema: { response: { 200: { type: 'object', properties: { a: { type: 'string' } } }, ...error } } }, async () => ({
    a: 'x',
    b: 'hidden',
  }))
  app.get('/b', { schema: { response: { 200: { type: 'object', properties: { b: { type: 'string' } } }, ...error } } }, async (_, reply) =>
    reply.code(404).send({ statusCode: 404, message: 'no b', b: 'hidden' }),
  )
  await app.ready()
  t.same((await app.inject('/a')).json(), { a: 'x' })
  const missing = await app.inject('/b')
  t.equal(missing.statusCode, 404)
  t.same(missing.json(), { statusCode: 404, message: 'no b' })
})
