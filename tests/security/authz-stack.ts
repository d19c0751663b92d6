/**
 * Test support for the authorization tests: gateway + engine over one store, tenant A (the HR
 * example app, `hr`/`acme`) with a running leave request whose first task is locked by its
 * initiator, and tenant B (`ledger`/`globex`) with its own users. Every request goes through the
 * gateway with the credentials of a named user, made by a pluggable function: the `user` header by
 * default, a token once the deployment authenticates (jwt mode).
 */
import type { Test } from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import type { Config } from '../../lib/config/config.js'
import type { Store } from '../../store/port.js'
import { Collections, type StoredUser } from '../../store/collections.js'
import { ContractChecker } from '../../services/testing/contract.js'
import { type Envelope } from '../../services/testing/gateway.js'
import { openTestStore, startService } from '../../services/testing/harness.js'
import { createTestUser } from '../../services/testing/users.js'
import { createHrUsers, deployHrApp, HR, type HrUsers } from '../../services/testing/workflow.js'
import { deployProcess, payrollModel } from '../../services/engine/external-tasks/test-support.js'

export const TENANT_A = HR
export const TENANT_B = { appId: 'ledger', organizationId: 'globex' } as const

/** The headers that make a request act as `userId`. */
export type Credentials = (userId: string) => Record<string, string> | Promise<Record<string, string>>

/** Header mode (the default): the `user` header names the acting user. */
export const headerCredentials: Credentials = (userId) => ({ user: userId })

export interface TenantBUsers {
  admin: StoredUser
  system: StoredUser
  user: StoredUser
}

/** What tenant A holds that tenant B must never reach. */
export interface TenantAResources {
  processInstanceId: string
  businessKey: string
  /** The open first task, locked by its initiator (A's employee). */
  taskId: string
  /** With `externalTask`: an external task of A's, locked by A's worker, its input holding the leave's reason. */
  externalTaskId?: string
}

export interface GatewayAnswer<Data = unknown> {
  status: number
  body: Envelope<Data>
  text: string
}

export interface SendOptions {
  /** Acting user (credentials made by the stack's Credentials); none: anonymous. */
  as?: StoredUser | undefined
  body?: unknown
  headers?: Record<string, string>
  /** Check the answer against this gateway operation's documented schemas. */
  operationId?: string
}

export interface SecureStack {
  store: Store
  gatewayUrl: string
  engineUrl: string
  a: HrUsers & { system: StoredUser }
  b: TenantBUsers
  resources: TenantAResources
  credentials: Credentials
  send<Data = unknown>(method: string, path: string, options?: SendOptions): Promise<GatewayAnswer<Data>>
}

export interface StackOptions {
  config?: Partial<Config>
  credentials?: Credentials
  /** Tenant A also runs a `payroll` process waiting at an external task, locked by A's system user. */
  externalTask?: boolean
}

const gatewayContract = new ContractChecker('gateway')

export async function startSecureStack(t: Test, options: StackOptions = {}): Promise<SecureStack> {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const a = {
    ...(await createHrUsers(store)),
    system: await createTestUser(store, { ...TENANT_A, fullName: 'Ivy Integration', isSystemUser: true }),
  }
  const b: TenantBUsers = {
    admin: await createTestUser(store, {
      ...TENANT_B,
      fullName: 'Bea Ledger-Admin',
      roles: ['admin'],
      swimlanes: ['employee', 'manager', 'hr'],
    }),
    system: await createTestUser(store, { ...TENANT_B, fullName: 'Sys Ledger', isSystemUser: true, roles: ['admin'] }),
    user: await createTestUser(store, { ...TENANT_B, fullName: 'Bob Ledger', swimlanes: ['employee', 'manager', 'hr'] }),
  }
  const engine = await startService(t, 'engine', { store, ...(options.config ? { config: options.config } : {}) })
  const gateway = await startService(t, 'gateway', { store, config: { ...options.config, engineUrl: engine.url } })
  const credentials = options.credentials ?? headerCredentials

  async function send<Data>(method: string, path: string, sendOptions: SendOptions = {}): Promise<GatewayAnswer<Data>> {
    const headers: Record<string, string> = { ...(sendOptions.as ? await credentials(sendOptions.as.userId) : {}), ...sendOptions.headers }
    const init: RequestInit = { method, headers }
    if (sendOptions.body instanceof FormData) init.body = sendOptions.body
    else if (sendOptions.body !== undefined) {
      headers['content-type'] = 'application/json'
      init.body = typeof sendOptions.body === 'string' ? sendOptions.body : JSON.stringify(sendOptions.body)
    }
    const response = await fetch(`${gateway.url}${path}`, init)
    const text = await response.text()
    let body: Envelope<Data>
    try {
      body = JSON.parse(text) as Envelope<Data>
    } catch {
      body = { status: 'error', data: text as Data }
    }
    if (sendOptions.operationId)
      t.same(
        gatewayContract.errors(sendOptions.operationId, response.status, body),
        [],
        `${sendOptions.operationId} ${response.status} answer matches the contract`,
      )
    return { status: response.status, body, text }
  }

  const started = await send<Session>('POST', '/context', {
    as: a.employee,
    body: { ...TENANT_A, processId: 'leave-request', input: { days: 3, reason: 'Family visit' } },
  })
  if (started.status !== 200) throw new Error(`tenant A's leave request did not start: ${started.text}`)
  const instance = started.body.data.context.processInstance
  const task = started.body.data.formContext.task
  if (!task) throw new Error("tenant A's leave request has no open task")
  const externalTaskId = options.externalTask ? await lockedExternalTaskOfA(send, store, a.employee, a.system) : undefined
  return {
    store,
    gatewayUrl: gateway.url,
    engineUrl: engine.url,
    a,
    b,
    resources: {
      processInstanceId: instance.processInstanceId,
      businessKey: instance.businessKey,
      taskId: task.taskId,
      ...(externalTaskId === undefined ? {} : { externalTaskId }),
    },
    credentials,
    send,
  }
}

/** A payroll instance of A's waiting at its external task, which A's worker has locked. */
async function lockedExternalTaskOfA(send: SecureStack['send'], store: Store, employee: StoredUser, worker: StoredUser): Promise<string> {
  await deployProcess(store, TENANT_A, payrollModel({ input: 'data' }))
  const started = await send('POST', '/process/start', {
    as: employee,
    body: { ...TENANT_A, processId: 'payroll', input: { days: 3, reason: 'Family visit' } },
  })
  if (started.status !== 200) throw new Error(`tenant A's payroll did not start: ${started.text}`)
  const fetched = await send<Array<{ externalTaskId: string }>>('POST', '/external/worker/fetchAndLock', {
    as: worker,
    body: { ...TENANT_A, workerId: 'worker-a', topics: [{ topic: 'payroll', lockDuration: 3_600_000 }], maxTasks: 1 },
  })
  const externalTaskId = fetched.body.data[0]?.externalTaskId
  if (!externalTaskId) throw new Error(`tenant A's external task was not locked: ${fetched.text}`)
  return externalTaskId
}

/** Tenant A's stored state that a request of another tenant must leave as it was. */
export async function snapshotTenantA(store: Store): Promise<string> {
  const all = async (name: string, filter: Record<string, unknown> = {}) =>
    (await store.collection<Record<string, unknown>>(name).find(filter).toArray()).map((document) => JSON.stringify(document)).sort()
  return JSON.stringify({
    contexts: await all(Collections.contexts, { appId: TENANT_A.appId }),
    activities: await all(Collections.activities),
    notifications: await all(Collections.notifications),
    locks: await all(Collections.taskLocks),
    batchJobs: await all(Collections.batchJobs, { appId: TENANT_A.appId }),
    users: await all(Collections.users, { appId: TENANT_A.appId }),
    externalTasks: await all(Collections.externalTasks, { appId: TENANT_A.appId }),
  })
}
