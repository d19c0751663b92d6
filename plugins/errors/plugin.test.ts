import Fastify, { type FastifyInstance } from 'fastify'
import t from 'tap'
import { serverOptions } from '../service-base/server-options.js'
import { silentLogger } from '../../services/testing/harness.js'
import errors, { type ErrorsPluginOptions } from './plugin.js'
import type { ErrorCatalogue, ErrorFactory } from './service-error.js'

const catalogue = {
  xx4000: { status: 400, type: 'business', category: 'error', message: 'Invalid request: %s' },
  xx4001: { status: 400, type: 'business', category: 'error', message: 'Malformed JSON body' },
  xx4004: { status: 404, type: 'business', category: 'error', message: 'Route %s not found' },
  xx4013: { status: 413, type: 'business', category: 'error', message: 'Request body too large' },
  xx4015: { status: 415, type: 'business', category: 'error', message: 'Unsupported content type' },
  xx3090: { status: 404, type: 'business', category: 'error', message: 'Note %s not found' },
  xx5000: { status: 500, type: 'technical', category: 'error', message: 'Internal server error' },
} satisfies ErrorCatalogue

async function build(style: ErrorsPluginOptions['style'], exposeStack = false): Promise<FastifyInstance> {
  const app = Fastify(serverOptions(silentLogger))
  await app.register(errors, {
    catalogue,
    codes: {
      validation: 'xx4000',
      malformedBody: 'xx4001',
      notFound: 'xx4004',
      bodyTooLarge: 'xx4013',
      unsupportedMediaType: 'xx4015',
      internal: 'xx5000',
    },
    style,
    exposeStack,
  })
  app.post(
    '/things',
    {
      schema: {
        body: {
          type: 'object',
          required: ['name'],
          properties: { name: { type: 'string' }, nested: { type: 'object', properties: { count: { type: 'integer' } } } },
          additionalProperties: false,
        },
      },
    },
    async (request) => ({ received: request.body }),
  )
  app.get('/notes/:id', async (request) => {
    // This test's own catalogue, not the services': its factory takes its own codes.
    const fail = app.fail as ErrorFactory<string>
    throw fail('xx3090', {
      args: [(request.params as { id: string }).id],
      parameters: { noteId: (request.params as { id: string }).id },
      summary: 'Not found',
    })
  })
  app.get('/boom', async () => {
    throw new Error('database password is hunter2')
  })
  t.teardown(() => app.close())
  return app
}

t.test('record style answers ICustomError records', async (t) => {
  const app = await build('record')
  const response = await app.inject({ method: 'GET', url: '/notes/n1' })
  t.equal(response.statusCode, 404)
  t.same(response.json(), {
    statusCode: 404,
    type: 'business',
    category: 'error',
    message: 'Note n1 not found',
    code: 'xx3090',
    summary: 'Not found',
    parameters: { noteId: 'n1' },
  })
})

t.test('envelope style wraps the record', async (t) => {
  const app = await build('envelope')
  const response = await app.inject({ method: 'GET', url: '/notes/n1' })
  t.equal(response.statusCode, 404)
  t.same(response.json(), {
    status: 'customerror',
    data: null,
    error: { message: 'Note n1 not found', title: 'Not found', code: 'xx3090', parameters: { noteId: 'n1' } },
  })
})

t.test('failed validation is a 400 naming the field', async (t) => {
  const app = await build('envelope')
  const missing = await app.inject({ method: 'POST', url: '/things', payload: { nested: {} } })
  t.equal(missing.statusCode, 400)
  t.match(missing.json(), {
    status: 'customerror',
    error: { code: 'xx4000', message: 'Invalid request: body.name is required', parameters: { field: 'body.name' } },
  })
  const wrongType = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', nested: { count: 'many' } } })
  t.equal(wrongType.statusCode, 400)
  t.match(wrongType.json(), { error: { code: 'xx4000', parameters: { field: 'body.nested.count' } } })
  t.match(wrongType.json().error.message, /^Invalid request: body\.nested\.count must be integer/)
})

t.test('unknown fields are dropped, never passed on', async (t) => {
  const app = await build('record')
  const response = await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', injected: { $where: 'x' } } })
  t.equal(response.statusCode, 200)
  t.same(response.json(), { received: { name: 'a' } })
})

/** Bodies the framework refuses before a handler runs, each with the catalogue code it answers. */
const refusedBodies = [
  {
    behaviour: 'malformed JSON is a 400, not a 500',
    contentType: 'application/json',
    payload: '{"name": ',
    statusCode: 400,
    code: 'xx4001',
  },
  {
    behaviour: 'a body over the limit is a 413',
    contentType: 'application/json',
    payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }),
    statusCode: 413,
    code: 'xx4013',
  },
  {
    behaviour: 'a content type the route cannot parse is a 415',
    contentType: 'application/x-unknown',
    payload: 'name=a',
    statusCode: 415,
    code: 'xx4015',
  },
]

for (const { behaviour, contentType, payload, statusCode, code } of refusedBodies) {
  t.test(behaviour, async (t) => {
    const app = await build('envelope')
    const response = await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': contentType }, payload })
    t.equal(response.statusCode, statusCode)
    t.match(response.json(), { status: 'customerror', error: { code } })
  })
}

t.test('an unknown route is a 404 with the catalogue code', async (t) => {
  const app = await build('envelope')
  const response = await app.inject({ method: 'GET', url: '/nowhere?x=1' })
  t.equal(response.statusCode, 404)
  t.match(response.json(), { status: 'customerror', error: { code: 'xx4004', message: 'Route GET /nowhere not found' } })
})

t.test('an unexpected failure is a 500 that hides server internals', async (t) => {
  const app = await build('envelope')
  const response = await app.inject({ method: 'GET', url: '/boom' })
  t.equal(response.statusCode, 500)
  t.same(response.json(), { status: 'error', data: null, error: { message: 'Internal server error', code: 'xx5000' } })
  t.notMatch(response.body, /hunter2/)
})

t.test('in development the stack is shown in data', async (t) => {
  const app = await build('envelope', true)
  const response = await app.inject({ method: 'GET', url: '/boom' })
  t.equal(response.statusCode, 500)
  t.match(response.json().data, /Error: database password/)
})

t.test(
  'a URL the router refuses (bad percent-encoding, an over-long path parameter) is a 400 in the envelope with a catalogue code',
  async (t) => {
    const app = await build('envelope')
    for (const url of ['/notes/%E0%A4%A', `/notes/${'p'.repeat(4000)}`]) {
      const response = await app.inject({ method: 'GET', url })
      t.equal(response.statusCode, 400, url.slice(0, 20))
      t.match(response.json(), { status: 'customerror', data: null, error: { code: 'xx4000', message: /^Invalid request: the URL: / } })
    }
  },
)
