/** Test support for the gateway's direct endpoints: a gateway on an ephemeral port and a contract-checking client. */
import type { Test } from 'tap'
import { type RunningService, type StartOptions, startService } from './harness.js'
import { type WorkflowClient, workflowClient } from './workflow.js'
import { ContractChecker } from './contract.js'

const gatewayContract = new ContractChecker('gateway')

/** A gateway answer in the envelope (docs/reference/http.md#envelope). */
export interface Envelope<Data = unknown> {
  status: 'success' | 'customerror' | 'permissionError' | 'error'
  data: Data
  error?: { message: string; code: string; title?: string }
}

export interface TestGateway {
  gateway: RunningService
  /** Every answer is checked against the gateway's OpenAPI document. */
  client: WorkflowClient
}

export async function startGateway(t: Test, options: StartOptions = {}): Promise<TestGateway> {
  const gateway = await startService(t, 'gateway', options)
  return { gateway, client: workflowClient(t, gateway.url, 'gateway') }
}

/** A gateway answer: its status, envelope and headers. */
export interface GatewayAnswer<Data = unknown> {
  status: number
  body: Envelope<Data>
  headers: Headers
}

/**
 * Sends `body` (JSON, or a FormData as multipart) to the gateway at `gatewayUrl` with `headers`, and
 * checks the answer against `operationId`'s documented schemas.
 */
export async function sendToGateway<Data = unknown>(
  t: Pick<Test, 'same'>,
  gatewayUrl: string,
  request: { operationId: string; method: string; path: string; headers: Record<string, string>; body?: unknown },
): Promise<GatewayAnswer<Data>> {
  const headers = { ...request.headers }
  const init: RequestInit = { method: request.method, headers }
  if (request.body instanceof FormData) init.body = request.body
  else if (request.body !== undefined) {
    headers['content-type'] = 'application/json'
    init.body = JSON.stringify(request.body)
  }
  const response = await fetch(`${gatewayUrl}${request.path}`, init)
  const body = (await response.json()) as Envelope<Data>
  const { operationId } = request
  t.same(gatewayContract.errors(operationId, response.status, body), [], `${operationId} ${response.status} answer matches the contract`)
  return { status: response.status, body, headers: response.headers }
}
