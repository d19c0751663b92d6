/**
 * The webhook outbox (docs/reference/consistency.md#outbox) survives `kill -9`. The delivery record is stored in the same commit
 * as the action, so an engine killed right after answering the action (its receiver unreachable, so
 * nothing could have gone out before) still delivers it once it is back; and a try cut off by the
 * kill (its receiver had not answered yet) is made again, with the same delivery id, once the claim
 * of the killed engine lapses.
 */
import { randomUUID } from 'node:crypto'
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import t from 'tap'
import { openStore } from '../../store/open.js'
import { Collections, type StoredWebhookSubscription } from '../../store/collections.js'
import { verifyWebhook } from '../../sdk/webhooks.js'
import { type ChildService, spawnService } from '../../services/testing/child-service.js'
import { tempDir } from '../../services/testing/harness.js'
import { waitUntil } from '../../services/testing/wait.js'
import { createHrUsers, deployHrApp, HR } from '../../services/testing/workflow.js'

const SECRET = 'kill-test-secret-0123456789abcdef0123'

interface Got {
  headers: IncomingHttpHeaders
  rawBody: string
  eventType: string
}

t.test(
  "kill -9 right after an action: the action's event is still delivered after the restart, and a try cut off by the kill is made again",
  { timeout: 180_000 },
  async (t) => {
    const dataDir = tempDir(t, 'webhooks-kill-')
    // The receiver: first it holds requests without answering (a try under way when the engine dies).
    const got: Got[] = []
    const held: ServerResponse[] = []
    let answering = false
    const receiver = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8')
        got.push({ headers: request.headers, rawBody, eventType: String(request.headers['x-workflow-event']) })
        if (answering) response.writeHead(200).end()
        else held.push(response)
      })
    })
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
    t.teardown(() => {
      receiver.closeAllConnections()
      receiver.close()
    })
    const port = (receiver.address() as AddressInfo).port

    const seed = await openStore({ dataDir })
    await deployHrApp(seed)
    const { employee } = await createHrUsers(seed)
    const subscription: StoredWebhookSubscription = {
      _id: randomUUID(),
      ...HR,
      url: `http://127.0.0.1:${port}/hooks`,
      events: ['Created', 'TaskCompleted'],
      processIds: [],
      secret: SECRET,
      createdAt: new Date(),
    }
    await seed.collection(Collections.webhookSubscriptions).insertOne({ ...subscription })
    await seed.close()

    // A try may take 2 s; a claim then lasts 4 s (twice the timeout) before another engine may try again.
    const env = {
      DATA_DIR: dataDir,
      WEBHOOK_ALLOWED_HOSTS: '127.0.0.1',
      WEBHOOK_TIMEOUT_MS: '2000',
      WEBHOOK_BACKOFF_MS: '50',
      BATCH_POLL_MS: '50',
      BATCH_LEASE_MS: '100',
    }
    let engine: ChildService = spawnService('engine/server', env, 1)
    t.teardown(() => void engine.child.kill('SIGKILL'))
    const url = (await engine.ready)['workflow-engine']!
    const call = async (
      path: string,
      body: unknown,
    ): Promise<{
      status: number
      body: { context: { processInstance: { processInstanceId: string; businessKey: string } }; formContext: { task?: { taskId: string } } }
    }> => {
      const response = await fetch(`${url}${path}`, {
        method: 'POST',
        headers: { user: employee.userId, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
      return { status: response.status, body: (await response.json()) as never }
    }
    const started = await call('/context', { ...HR, processId: 'leave-request', input: { days: 2, reason: 'kill -9' } })
    t.equal(started.status, 200)
    await waitUntil(
      () => got.length,
      (count) => count >= 1,
    )
    t.equal(got[0]?.eventType, 'Created', 'the Created delivery is being tried (the receiver holds it)')
    const instance = started.body.context.processInstance
    const completed = await call('/action/complete', {
      ...HR,
      processId: 'leave-request',
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey,
      taskId: started.body.formContext.task?.taskId,
      actionType: 'complete',
      dataInstance: { days: 2, reason: 'kill -9' },
    })
    t.equal(completed.status, 200, 'the action was answered')
    engine.child.kill('SIGKILL')
    await engine.exited
    const beforeKill = got.length
    t.ok(
      got.every((request) => request.eventType === 'Created'),
      'the TaskCompleted delivery waits behind Created: nothing of it went out before the kill',
    )
    for (const response of held) response.destroy()

    answering = true
    engine = spawnService('engine/server', env, 1)
    await engine.ready
    await waitUntil(
      () => got.map((request) => request.eventType),
      (types) => types.includes('TaskCompleted'),
      20_000,
    )
    const after = got.slice(beforeKill)
    t.same(
      after.map((request) => request.eventType),
      ['Created', 'TaskCompleted'],
      'after the restart: Created again (its try was cut off), then TaskCompleted, in order',
    )
    t.equal(
      after[0]?.headers['x-workflow-delivery'],
      got[0]?.headers['x-workflow-delivery'],
      'the cut-off try is made again with the same delivery id',
    )
    for (const request of after)
      t.match(verifyWebhook(SECRET, request.headers, request.rawBody), { valid: true }, `${request.eventType} is signed`)
    t.match(JSON.parse(after[1]!.rawBody), {
      eventType: 'TaskCompleted',
      processInstance: { processInstanceId: instance.processInstanceId },
    })
  },
)
