/** Test support for the gateway's direct endpoints: a gateway on an ephemeral port and a contract-checking client. */
import type { Test } from 'tap'
import { type RunningService, type StartOptions, startService } from './harness.js'
import { type WorkflowClient, workflowClient } from './workflow.js'

/** A gateway answer in the envelope (DESIGN.md §4). */
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
