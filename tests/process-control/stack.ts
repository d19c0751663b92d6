/**
 * Test support for the process-control tests: gateway + engine over one embedded store with the HR
 * example app and its users (plus a system user), every request through the gateway, its answer
 * checked against the gateway's OpenAPI document, and helpers that drive a leave request to the
 * states the rules are about.
 */
import type { Test } from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import type { Config } from '../../lib/config/config.js'
import type { Clock } from '../../plugins/clock/plugin.js'
import type { Store } from '../../store/port.js'
import type { StoredUser } from '../../store/collections.js'
import { type GatewayAnswer, sendToGateway } from '../../services/testing/gateway.js'
import { startHrStack } from '../../services/testing/hr-stack.js'
import { storedInstance } from '../../services/testing/instance-store.js'
import { HR, type HrUsers, taskIds } from '../../services/testing/workflow.js'
import { setConstant } from '../../services/testing/models.js'

export type Answer<Data = unknown> = GatewayAnswer<Data>

export interface SendOptions {
  as?: StoredUser
  body?: unknown
  headers?: Record<string, string>
}

export interface ControlStack {
  store: Store
  users: HrUsers & { system: StoredUser }
  gatewayUrl: string
  engineUrl: string
  /** Sends through the gateway; the answer is checked against `operationId`'s documented schemas. */
  send<Data = unknown>(operationId: string, method: string, path: string, options?: SendOptions): Promise<Answer<Data>>
  /** A leave request started by the employee through `/context` (its first task locked for them). */
  startLeave(input?: Record<string, unknown>): Promise<Session>
  /** A leave request whose payroll branch failed (processStatus `failed`, one failed thread). */
  startFailedLeave(): Promise<Session>
  /** A leave request submitted and approved: `completed`. */
  startCompletedLeave(): Promise<Session>
  /** Sets the `payrollOnline` constant the leave request's payroll step reads. */
  payrollOnline(online: boolean): Promise<void>
}

export interface ControlStackOptions {
  /** The engine's clock (services/testing/clock.ts); the system clock when not given. */
  clock?: Clock
}

export async function startControlStack(t: Test, config: Partial<Config> = {}, options: ControlStackOptions = {}): Promise<ControlStack> {
  const { store, users, engines, gateway } = await startHrStack(t, {
    engineConfig: config,
    gatewayConfig: config,
    ...(options.clock ? { clock: options.clock } : {}),
  })

  async function send<Data>(operationId: string, method: string, path: string, options: SendOptions = {}): Promise<Answer<Data>> {
    const headers: Record<string, string> = { ...(options.as ? { user: options.as.userId } : {}), ...options.headers }
    return sendToGateway<Data>(t, gateway.url, { operationId, method, path, headers, body: options.body })
  }

  async function startLeave(input: Record<string, unknown> = { days: 3, reason: 'Family visit' }): Promise<Session> {
    const started = await send<Session>('openContext', 'POST', '/context', {
      as: users.employee,
      body: { ...HR, processId: 'leave-request', input },
    })
    if (started.status !== 200) throw new Error(`the leave request did not start: ${JSON.stringify(started.body)}`)
    return started.body.data
  }

  async function payrollOnline(online: boolean): Promise<void> {
    await setConstant(store, HR, 'payrollOnline', online ? 'yes' : 'no')
  }

  async function complete(user: StoredUser, session: Session, taskId: string): Promise<void> {
    const body = { ...HR, ...taskIds(session, taskId), actionType: 'complete', dataInstance: session.context.dataInstance }
    const answer = await send('completeAction', 'POST', '/action/complete', { as: user, body })
    if (answer.status !== 200) throw new Error(`completing ${taskId} failed: ${JSON.stringify(answer.body)}`)
  }

  /** A leave request submitted and approved, with the payroll step online or not: it ends `expected`. */
  async function approvedLeave(online: boolean, expected: 'completed' | 'failed'): Promise<Session> {
    await payrollOnline(online)
    const session = await startLeave()
    const id = session.context.processInstance.processInstanceId
    await complete(users.employee, session, session.formContext.task?.taskId ?? '')
    const approve = (await storedInstance(store, id)).processInstance.tasks.find((task) => task.status === 'open')
    if (!approve) throw new Error('no approval task')
    await complete(users.manager, session, approve.taskId)
    const stored = await storedInstance(store, id)
    if (stored.processStatus !== expected) throw new Error(`the leave request ended ${stored.processStatus}, not ${expected}`)
    return session
  }

  return {
    store,
    users,
    gatewayUrl: gateway.url,
    engineUrl: engines[0]!.url,
    send,
    startLeave,
    startFailedLeave: () => approvedLeave(false, 'failed'),
    startCompletedLeave: () => approvedLeave(true, 'completed'),
    payrollOnline,
  }
}
