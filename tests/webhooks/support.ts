/**
 * Test support for webhooks: a real receiver on 127.0.0.1 that records every request (raw body
 * included) and answers what the test says, and an engine and a gateway sharing one store with the
 * HR app, small backoff and poll settings, and 127.0.0.1 in WEBHOOK_ALLOWED_HOSTS.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { Config } from '../../lib/config/config.js'
import { type CreatedSubscription, NotificationEventType } from '../../openapi/generated/schemas.js'
import { type Envelope } from '../../services/testing/gateway.js'
import { startService } from '../../services/testing/harness.js'
import { HR, type HrEngine, startHrEngine, type WorkflowClient, workflowClient } from '../../services/testing/workflow.js'

export interface Received {
  headers: IncomingHttpHeaders
  rawBody: string
  body: {
    deliveryId: string
    eventType: string
    processInstance: { processInstanceId: string; processId: string }
    organizationId: string
    appId: string
  }
}

export type Answering = (request: Received, count: number) => number

export interface Receiver {
  url: string
  port: number
  received: Received[]
  /** Stops listening (connections are refused) until `open()`. */
  close(): Promise<void>
  open(): Promise<void>
}

export async function startReceiver(t: Pick<Test, 'teardown'>, answering: Answering = () => 200): Promise<Receiver> {
  const received: Received[] = []
  let server: Server | undefined
  let port = 0
  const listen = async (): Promise<void> => {
    const next = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8')
        const entry: Received = { headers: request.headers, rawBody, body: JSON.parse(rawBody) as Received['body'] }
        received.push(entry)
        response.writeHead(answering(entry, received.length)).end('ok')
      })
    })
    await new Promise<void>((resolve) => next.listen(port, '127.0.0.1', resolve))
    port = (next.address() as AddressInfo).port
    server = next
  }
  const close = async (): Promise<void> => {
    const current = server
    server = undefined
    if (!current) return
    current.closeAllConnections()
    await new Promise<void>((resolve) => current.close(() => resolve()))
  }
  await listen()
  t.teardown(close)
  return {
    get url() {
      return `http://127.0.0.1:${port}/hooks`
    },
    get port() {
      return port
    },
    received,
    close,
    open: listen,
  }
}

/** Small settings: a failed try is retried after 40, 80, 160… ms; the worker polls every 50 ms. */
export const FAST_WEBHOOKS: Partial<Config> = {
  webhooks: { allowedHosts: ['127.0.0.1'], timeoutMs: 2_000, backoffMs: 40 },
  batchPollMs: 50,
}

export interface WebhookStack {
  engine: HrEngine
  gateway: WorkflowClient
}

export async function startWebhookStack(t: Test, config: Partial<Config> = {}): Promise<WebhookStack> {
  const engine = await startHrEngine(t, { ...FAST_WEBHOOKS, ...config })
  const { url } = await startService(t, 'gateway', { store: engine.store, config: { ...FAST_WEBHOOKS, ...config, engineUrl: engine.url } })
  return { engine, gateway: workflowClient(t, url, 'gateway') }
}

/** Every event type there is (read from the contract, so types added later are subscribed to as well). */
export const ALL_EVENTS: NotificationEventType[] = NotificationEventType.anyOf.map((literal) => literal.const)

export async function subscribe(gateway: WorkflowClient, url: string, body: Record<string, unknown> = {}): Promise<CreatedSubscription> {
  const answer = await gateway.call<Envelope<CreatedSubscription>>('createSubscription', 'POST', '/subscription/create', {
    body: { url, events: ALL_EVENTS, ...HR, ...body },
  })
  if (answer.status !== 200) throw new Error(`subscribing failed: ${answer.status} ${JSON.stringify(answer.body)}`)
  return answer.body.data
}
