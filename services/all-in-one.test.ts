/**
 * The all-in-one as `npm start` runs it, in both of its shapes: the gateway on the engine's thread,
 * reaching it in-process (the default), and the gateway on a worker thread of its own
 * (ALL_IN_ONE_GATEWAY=thread), which crosses the thread boundary to the store and over HTTP to the
 * engine. Everything a client reaches goes through the gateway: the store (users, models), the proxy
 * to the engine, the log stream of both services, stdout, a small upload read whole (in-process on
 * the main thread) and downloaded back, and a graceful shutdown with a request in flight (a streamed
 * upload, which goes over HTTP in either shape).
 */
import { PassThrough } from 'node:stream'
import t from 'tap'
import { signStudioToken } from '../plugins/identity/studio-token.js'
import { runLeaveRequest } from '../scripts/examples/leave-request.js'
import { WorkflowClient } from '../sdk/client.js'
import { startAllInOne } from './testing/all-in-one.js'
import { openEventStream } from './testing/event-stream.js'
import { waitUntil } from './testing/wait.js'

const SECRET = 'studio-secret-0123456789abcdef0123456789'
const CLIENT_ID = 'aio-client'

for (const gateway of ['main', 'thread'] as const) {
  t.test(
    `the all-in-one with its gateway on the ${gateway} thread serves a leave request, both log streams and stdout, and stops gracefully`,
    { timeout: 90_000 },
    async (t) => {
      // The test itself shuts it down with SIGTERM; the kill at teardown only ends it at once should the test stop before that.
      const env = { DEPLOYMENT_ENV: 'test', STUDIO_TOKEN_SECRET: SECRET, ALL_IN_ONE_GATEWAY: gateway }
      const { service, gatewayUrl, engineUrl } = await startAllInOne(t, env, 'SIGKILL')
      t.equal((await fetch(`${engineUrl}/liveness`)).status, 200, 'the engine answers')
      t.equal((await fetch(`${gatewayUrl}/healthcheck`)).status, 200, 'the gateway answers')

      const streamHeaders = {
        lplogclientid: CLIENT_ID,
        studiotoken: signStudioToken({ sub: CLIENT_ID, exp: Math.floor(Date.now() / 1000) + 600 }, SECRET),
      }
      const gatewayLines = await openEventStream(`${gatewayUrl}/cloud/serviceLog/fm`, streamHeaders)
      const engineLines = await openEventStream(`${gatewayUrl}/cloud/serviceLog/wfm`, streamHeaders)
      t.teardown(() => {
        gatewayLines.close()
        engineLines.close()
      })
      t.same([gatewayLines.response.status, engineLines.response.status], [200, 200], 'both log streams open on the gateway')

      const outcome = await runLeaveRequest({ baseUrl: gatewayUrl })
      t.same(
        outcome.finalStatus,
        { tasks: [], processStatus: 'completed' },
        'a leave request ran through the gateway: users and models in the store, the process in the engine',
      )

      const traced = await fetch(`${gatewayUrl}/process/${outcome.processInstanceId}`, {
        headers: { user: outcome.employee.userId, lplogclientid: CLIENT_ID, 'x-request-id': 'aio-traced' },
      })
      t.equal(traced.status, 200)
      const carries = (reqId: string) => (event: string) => event.includes(`"reqId":"${reqId}"`) && event.includes('request completed')
      await gatewayLines.waitFor((s) => s.events().some(carries('aio-traced')), 10_000)
      await engineLines.waitFor((s) => s.events().some(carries('aio-traced')), 10_000)
      t.ok(
        gatewayLines.events().every((event) => event.includes('"service":"workflow-gateway"')),
        "the fm stream has the gateway's lines only",
      )
      t.ok(
        engineLines.events().every((event) => event.includes('"service":"workflow-engine"')),
        "the wfm stream has the engine's lines only",
      )

      // Stdout is written in the services' own time (pino's buffered destination): read until both lines are there.
      const tracedBy = (serviceName: string) => (entries: Array<{ service?: string; reqId?: string }>) =>
        entries.some((entry) => entry.service === serviceName && entry.reqId === 'aio-traced')
      const stdout = await waitUntil(
        () => service.stdoutLines.map((line) => JSON.parse(line) as { service?: string; reqId?: string }),
        (entries) => tracedBy('workflow-gateway')(entries) && tracedBy('workflow-engine')(entries),
        10_000,
      )
      t.ok(tracedBy('workflow-gateway')(stdout), "the gateway's lines reach stdout")
      t.ok(tracedBy('workflow-engine')(stdout), "and so do the engine's, every line whole JSON")

      const employee = new WorkflowClient({ baseUrl: gatewayUrl, organizationId: 'acme', appId: 'hr', userId: outcome.employee.userId })
      const started = await employee.post('/context', { body: { processId: 'leave-request', input: { days: 1 } } })
      const instance = started.context.processInstance
      const fileOfTheTask = (fileName: string) => ({
        processId: 'leave-request',
        processInstanceId: instance.processInstanceId,
        businessKey: instance.businessKey,
        taskDefinitionKey: 'request',
        taskId: started.formContext.task!.taskId,
        label: 'Note',
        fileName,
      })

      // A small upload of a declared length is read whole by the gateway (in-process on the main
      // thread): the engine's multipart parser reads it, and the download (over HTTP) gives it back.
      const contents = Buffer.from('%PDF-1.4 a note, read whole')
      const form = new FormData()
      form.append('fields', JSON.stringify({ organizationId: 'acme', appId: 'hr', ...fileOfTheTask('whole.pdf') }))
      form.append('fileBody', new Blob([contents], { type: 'application/pdf' }), 'whole.pdf')
      const encoded = new Request(gatewayUrl, { method: 'POST', body: form })
      const whole = await fetch(`${gatewayUrl}/file/upload`, {
        method: 'POST',
        headers: { user: outcome.employee.userId, 'content-type': encoded.headers.get('content-type')! },
        body: Buffer.from(await encoded.arrayBuffer()),
      })
      const stored = (await whole.json()) as { data: { storageHandle: string; fileName: string } }
      t.equal(whole.status, 200, 'the whole upload is stored')
      t.equal(stored.data.fileName, 'whole.pdf')
      const downloaded = await employee.downloadFile({
        processId: 'leave-request',
        processInstanceId: instance.processInstanceId,
        storageHandle: stored.data.storageHandle,
      })
      const chunks: Buffer[] = []
      for await (const chunk of downloaded.stream) chunks.push(chunk as Buffer)
      t.ok(Buffer.concat(chunks).equals(contents), 'and comes back byte for byte')

      // An upload whose body is still arriving when SIGTERM comes: it finishes before the process ends.
      const body = new PassThrough()
      body.write('the first half, ')
      const upload = employee.uploadFile(fileOfTheTask('note.txt'), body, {
        contentType: 'text/plain',
        headers: { lplogclientid: CLIENT_ID },
      })
      // In flight: the engine has the request (its first bytes), the client still sends.
      await engineLines.waitFor(
        (s) => s.events().some((event) => event.includes('"url":"/file/upload"') && event.includes('incoming request')),
        10_000,
      )
      service.child.kill('SIGTERM')
      await waitUntil(
        () => service.stdoutLines.some((line) => line.includes('SIGTERM received, shutting down')),
        (shuttingDown) => shuttingDown,
        10_000,
      )
      body.end('then the second half')
      t.match(await upload, { storageHandle: String, fileName: 'note.txt' }, 'the request in flight finished')
      const { code } = await service.exited
      t.equal(code, 0, 'SIGTERM exits 0')
      t.ok(service.stdoutLines.some((line) => line.includes('SIGTERM received, shutting down')))
    },
  )
}
