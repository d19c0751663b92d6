import { createHash, randomBytes } from 'node:crypto'
import { Readable } from 'node:stream'
import { buffer, text } from 'node:stream/consumers'
import multipart from '@fastify/multipart'
import t from 'tap'
import { closedPortUrl, engineError, startFakeEngine } from '../services/testing/fake-engine.js'
import { startService, type Teardown } from '../services/testing/harness.js'
import { type UploadSource, WorkflowApiError, WorkflowClient } from './client.js'

const tenant = { organizationId: 'acme', appId: 'hr' }

/** A gateway in front of a fake engine that answers what each test defines, recording what it got. */
async function gatewayWithEngine(t: Teardown, define: Parameters<typeof startFakeEngine>[1]) {
  const engine = await startFakeEngine(t, define)
  const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
  return { engine, client: new WorkflowClient({ baseUrl: gateway.url, ...tenant, userId: 'u-employee' }) }
}

t.test('a call answers the envelope’s data; organizationId, appId and the user header are injected into JSON bodies', async (t) => {
  const { engine, client } = await gatewayWithEngine(t, (app) => {
    app.post('/context', async (request) => {
      const body = JSON.parse(await text(request.body as Readable)) as Record<string, unknown>
      return { context: { dataInstance: body, processInstance: { processInstanceId: 'p-1' } }, formContext: {} }
    })
  })
  const session = await client.post('/context', { body: { processId: 'leave-request', input: { days: 3 } } })
  t.same(
    session.context.dataInstance,
    { ...tenant, processId: 'leave-request', input: { days: 3 } },
    'the body the engine got carries the tenant',
  )
  t.equal(engine.received[0]?.headers.user, 'u-employee')
})

t.test('GET and DELETE carry the tenant as query parameters; selectUser changes the user header', async (t) => {
  const { engine, client } = await gatewayWithEngine(t, (app) => {
    app.get('/process/:processInstanceId', async () => ({ tasks: [{ taskId: 't-1' }], processStatus: 'running' }))
    app.delete('/external/locks/:userId', async () => ({ status: 'OK' }))
  })
  const status = await client.get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p 1' } } })
  t.same(status, { tasks: [{ taskId: 't-1' }], processStatus: 'running' })
  t.equal(engine.received[0]?.url, '/process/p%201?organizationId=acme&appId=hr')
  client.selectUser('u-admin')
  t.same(await client.delete('/external/locks/{userId}', { params: { path: { userId: 'u-employee' } } }), { status: 'OK' })
  t.equal(engine.received[1]?.url, '/external/locks/u-employee?organizationId=acme&appId=hr')
  t.equal(engine.received[1]?.headers.user, 'u-admin')
})

t.test('a failure is a WorkflowApiError with the HTTP status, envelope status, code and message', async (t) => {
  const { client } = await gatewayWithEngine(t, (app) => {
    app.post('/note/update', async (_request, reply) =>
      reply.code(404).send(engineError(404, 'wm3090', 'Note not found: n-1', { summary: 'No such note', parameters: { noteId: 'n-1' } })),
    )
    app.post('/context/activity', async (_request, reply) =>
      reply.code(403).send(engineError(403, 'wm4030', 'Not authorized on this process instance')),
    )
  })
  const notFound = await client
    .post('/note/update', { body: { processInstanceId: 'p-1', note: { id: 'n-1', note: 'x' } } })
    .catch((error: unknown) => error)
  t.ok(notFound instanceof WorkflowApiError)
  t.match(notFound, {
    httpStatus: 404,
    status: 'customerror',
    code: 'wm3090',
    message: 'Note not found: n-1',
    details: { title: 'No such note', parameters: { noteId: 'n-1' } },
  })
  const forbidden = await client.post('/context/activity', { body: { processInstanceId: 'p-1' } }).catch((error: unknown) => error)
  t.match(forbidden, { httpStatus: 403, status: 'permissionError', code: 'wm4030' })
})

t.test('the gateway’s own failures arrive the same way (engine unreachable: 502 fm5020)', async (t) => {
  const gateway = await startService(t, 'gateway', { config: { engineUrl: await closedPortUrl() } })
  const client = new WorkflowClient({ baseUrl: gateway.url, ...tenant, userId: 'u-1' })
  const error = await client
    .get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p-1' } } })
    .catch((error: unknown) => error)
  t.match(error, { name: 'WorkflowApiError', httpStatus: 502, status: 'error', code: 'fm5020', message: 'Engine unreachable' })
})

t.test('direct gateway endpoints go through the same client', async (t) => {
  const gateway = await startService(t, 'gateway')
  const client = new WorkflowClient({ baseUrl: gateway.url, ...tenant })
  const health = await client.get('/healthcheck')
  t.equal(health.name, 'workflow-gateway')
})

t.test('uploads a file from a Buffer, a Blob or a stream, with the tenant in its fields', async (t) => {
  const { client } = await gatewayWithEngine(t, (app) => {
    void app.register(multipart, { limits: { fileSize: 30 * 1024 * 1024 } })
    app.post('/file/upload', async (request) => {
      const answer: Record<string, string> = {}
      for await (const part of request.parts()) {
        if (part.type === 'field') answer[part.fieldname] = String(part.value)
        else {
          answer.sha256 = createHash('sha256')
            .update(await part.toBuffer())
            .digest('hex')
          answer.fileType = part.mimetype
          answer.fileName = part.filename
        }
      }
      return { id: answer.sha256, storageHandle: answer.fields, label: 'x', fileName: answer.fileName, fileType: answer.fileType }
    })
  })
  const bytes = randomBytes(3 * 1024 * 1024 + 7)
  const sha256 = createHash('sha256').update(bytes).digest('hex')
  const fields = {
    processId: 'leave-request',
    processInstanceId: 'p-1',
    businessKey: 'LR-1',
    taskDefinitionKey: 'request',
    taskId: 't-1',
    label: 'Medical certificate',
    fileName: 'certificate "final".pdf',
  }
  const sources: Array<[string, UploadSource, string | undefined]> = [
    ['Buffer', bytes, 'application/pdf'],
    ['Blob', new Blob([bytes], { type: 'application/pdf' }), undefined],
    [
      'stream',
      Readable.from(
        (function* () {
          for (let offset = 0; offset < bytes.length; offset += 65_536) yield bytes.subarray(offset, offset + 65_536)
        })(),
      ),
      'application/pdf',
    ],
  ]
  for (const [kind, source, contentType] of sources) {
    const file = await client.uploadFile(fields, source, contentType ? { contentType } : {})
    t.equal(file.id, sha256, `${kind}: every byte arrived`)
    t.equal(file.fileType, 'application/pdf', `${kind}: with its content type`)
    t.equal(file.fileName, 'certificate %22final%22.pdf', `${kind}: with its (quoted) file name`)
    t.same(JSON.parse(file.storageHandle), { ...tenant, ...fields }, `${kind}: the fields part carries the tenant`)
  }
})

t.test('downloads a file as a stream; a failed download is a WorkflowApiError', async (t) => {
  const bytes = randomBytes(512 * 1024)
  const { engine, client } = await gatewayWithEngine(t, (app) => {
    app.post('/file/download', async (request, reply) => {
      const body = JSON.parse(await text(request.body as Readable)) as { storageHandle: string }
      if (body.storageHandle !== 'h-1') return reply.code(404).send(engineError(404, 'wm3072', 'File not found'))
      return reply.type('application/pdf').header('content-disposition', 'attachment; filename="scan.pdf"').send(bytes)
    })
  })
  const request = {
    processId: 'leave-request',
    processInstanceId: 'p-1',
    businessKey: 'LR-1',
    taskDefinitionKey: 'request',
    taskId: 't-1',
    storageHandle: 'h-1',
  }
  const file = await client.downloadFile(request)
  t.match(file, { contentType: 'application/pdf', fileName: 'scan.pdf', size: bytes.length })
  t.ok((await buffer(file.stream)).equals(bytes), 'the bytes, untouched')
  t.equal(engine.received[0]?.headers.user, 'u-employee')
  const missing = await client.downloadFile({ ...request, storageHandle: 'h-2' }).catch((error: unknown) => error)
  t.match(missing, { name: 'WorkflowApiError', httpStatus: 404, status: 'customerror', code: 'wm3072' })
})

/** Compile-time checks: the client's types come from the contract (tsc fails if these stop failing). */
export function typeChecks(client: WorkflowClient): void {
  // @ts-expect-error processId is required by ContextRequest
  void client.post('/context', { body: { input: {} } })
  // @ts-expect-error the path parameter is required
  void client.get('/process/{processInstanceId}')
  // @ts-expect-error no such route
  void client.get('/no/such/route')
  // @ts-expect-error the model fetch is raw, not enveloped
  void client.get('/model/getModel/{id}', { params: { path: { id: 'm' } } })
}

t.test(
  'token: sent as authorization Bearer on every request (a string, or a function asked each time); the gateway forwards it to the engine',
  async (t) => {
    const engine = await startFakeEngine(t, (app) => {
      app.get('/process/:processInstanceId', async () => ({ tasks: [], processStatus: 'running' }))
    })
    const gateway = await startService(t, 'gateway', { config: { engineUrl: engine.url } })
    const fixed = new WorkflowClient({ baseUrl: gateway.url, ...tenant, token: 'token-one' })
    await fixed.get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p-1' } } })
    t.equal(engine.received[0]?.headers.authorization, 'Bearer token-one', 'the string token reached the engine through the proxy')
    t.equal(engine.received[0]?.headers.user, undefined, 'no user header without a selected user')

    let renewals = 0
    const renewing = new WorkflowClient({ baseUrl: gateway.url, ...tenant, token: async () => `renewed-${++renewals}` })
    await renewing.get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p-1' } } })
    await renewing.get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p-1' } } })
    t.same(
      [engine.received[1]?.headers.authorization, engine.received[2]?.headers.authorization],
      ['Bearer renewed-1', 'Bearer renewed-2'],
      'the function is asked before each request',
    )

    await renewing.get('/process/{processInstanceId}', {
      params: { path: { processInstanceId: 'p-1' } },
      headers: { authorization: 'Bearer admin-token-0123456789' },
    })
    t.equal(engine.received[3]?.headers.authorization, 'Bearer admin-token-0123456789', "a caller's own authorization header wins")
    renewing.useToken(undefined)
    await renewing.get('/process/{processInstanceId}', { params: { path: { processInstanceId: 'p-1' } } })
    t.equal(engine.received[4]?.headers.authorization, undefined, 'useToken(undefined) stops sending one')
  },
)
