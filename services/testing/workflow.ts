/**
 * Test support for the engine's workflow endpoints: an engine on a real port over a temporary store
 * with the HR example app deployed (leave request, purchase, constants, function library, leave
 * bookings) and one user per role, and a client whose every answer is checked against the
 * engine's OpenAPI document.
 */
import type { FastifyInstance } from 'fastify'
import type { Test } from 'tap'
import type { Session } from '../../openapi/generated/schemas.js'
import type { Config } from '../../lib/config/config.js'
import type { Store } from '../../store/port.js'
import type { ServiceKind } from '../build.js'
import type { StoredUser } from '../../store/collections.js'
import { ContractChecker } from './contract.js'
import { openTestStore, type StartOptions, startService, type Teardown } from './harness.js'
import { deployExample } from './models.js'
import { HR } from './tenant.js'
import { bearerIdentity } from './tokens.js'
import { createTestUser } from './users.js'

/** The parts of a tap Test the client uses. */
export type ContractTest = Teardown & Pick<Test, 'same'>

export { HR }

export interface HrUsers {
  /** Starts leave requests and purchases (swimlanes employee, buyer). */
  employee: StoredUser
  /** A second employee. */
  colleague: StoredUser
  manager: StoredUser
  hr: StoredUser
  finance: StoredUser
  legal: StoredUser
  admin: StoredUser
  /** A user of the app with no swimlane. */
  outsider: StoredUser
  /** A user of another app. */
  stranger: StoredUser
}

export interface Answer<Body = unknown> {
  status: number
  body: Body
  headers: Headers
}

export interface WorkflowClient {
  url: string
  /** Sends a request and checks the answer against the operation's documented schema. */
  call<Body = unknown>(
    operationId: string,
    method: string,
    path: string,
    options?: { user?: string; body?: unknown; headers?: Record<string, string> },
  ): Promise<Answer<Body>>
}

/** How a call's `user` identifies itself: the `user` header (header mode) by default; see tokens.ts's `bearerIdentity` for jwt mode. */
export type Identify = (userId: string) => Record<string, string> | Promise<Record<string, string>>

export const userHeaderIdentity: Identify = (userId) => ({ user: userId })

export function workflowClient(
  t: ContractTest,
  url: string,
  service: ServiceKind = 'engine',
  identify: Identify = userHeaderIdentity,
): WorkflowClient {
  const contract = new ContractChecker(service)
  return {
    url,
    async call(operationId, method, path, options = {}) {
      const headers: Record<string, string> = { ...(options.user ? await identify(options.user) : {}), ...options.headers }
      if (options.body !== undefined) headers['content-type'] = 'application/json'
      const response = await fetch(`${url}${path}`, {
        method,
        headers,
        ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {}),
      })
      const text = await response.text()
      const body: unknown = text === '' ? undefined : JSON.parse(text)
      t.same(contract.errors(operationId, response.status, body), [], `${operationId} ${response.status} answer matches the contract`)
      return { status: response.status, body: body as never, headers: response.headers }
    },
  }
}

export async function deployHrApp(store: Store): Promise<void> {
  for (const example of ['leave-request', 'purchase', 'hr-constants', 'hr-lib', 'leave-bookings']) await deployExample(store, example, HR)
}

export async function createHrUsers(store: Store): Promise<HrUsers> {
  const user = (fullName: string, swimlanes: string[], roles = ['user']) => createTestUser(store, { ...HR, fullName, swimlanes, roles })
  return {
    employee: await user('Eve Employee', ['employee', 'buyer']),
    colleague: await user('Carl Colleague', ['employee']),
    manager: await user('Max Manager', ['manager']),
    hr: await user('Hanna Human', ['hr']),
    finance: await user('Fiona Finance', ['finance']),
    legal: await user('Larry Legal', ['legal']),
    admin: await user('Ada Admin', [], ['admin']),
    outsider: await user('Otto Outsider', []),
    stranger: await createTestUser(store, { appId: 'sales', organizationId: 'acme', fullName: 'Sam Stranger', swimlanes: ['manager'] }),
  }
}

export interface HrEngine extends WorkflowClient {
  store: Store
  app: FastifyInstance
  users: HrUsers
}

/**
 * An engine with the HR app deployed and its users created. With `config.auth` in jwt mode (e.g.
 * tokens.ts's `jwtAuthConfig()`), calls identify their `user` with a bearer token signed with the
 * test secret rather than the `user` header. `storeSeenByEngine` wraps the store the engine is given
 * (`store` stays the one underneath), to stage what another request does at a given moment.
 */
export async function startHrEngine(
  t: ContractTest,
  config: Partial<Config> = {},
  { storeSeenByEngine, ...options }: Pick<StartOptions, 'clock'> & { storeSeenByEngine?: (store: Store) => Store } = {},
): Promise<HrEngine> {
  const store = await openTestStore(t)
  await deployHrApp(store)
  const users = await createHrUsers(store)
  const { url, app } = await startService(t, 'engine', { store: storeSeenByEngine?.(store) ?? store, config, ...options })
  return { store, users, app, ...workflowClient(t, url, 'engine', config.auth?.mode === 'jwt' ? bearerIdentity() : userHeaderIdentity) }
}

/** The open task a session's form context is about (fails the test's expectations when none). */
export function formTask(session: Session): NonNullable<Session['formContext']['task']> {
  const task = session.formContext.task
  if (!task) throw new Error(`the session has no task: ${JSON.stringify(session.formContext)}`)
  return task
}

/** Starts a leave request through `POST /context` as `user`. */
export async function startLeaveRequest(
  client: WorkflowClient,
  user: StoredUser,
  input: Record<string, unknown> = { days: 3, reason: 'Family visit' },
): Promise<Answer<Session>> {
  return client.call<Session>('openContext', 'POST', '/context', { user: user.userId, body: { ...HR, processId: 'leave-request', input } })
}

/** The fields by which a request (an action, a note, a file) names the task of an instance. */
export interface TaskIds {
  processId: string
  processInstanceId: string
  businessKey: string
  taskId: string
}

/** The instance of `session` and one of its tasks: `taskId`, or else the one its form context is about. */
export function taskIds(session: Session, taskId = formTask(session).taskId): TaskIds {
  const { processId, processInstanceId, businessKey } = session.context.processInstance
  return { processId, processInstanceId, businessKey, taskId }
}

/** Opens an instance's task form directly (`skipToForm`), taking its lock when the user may work on it. */
export async function openForm(client: WorkflowClient, user: StoredUser, session: Session, taskId?: string): Promise<Answer<Session>> {
  const { processId, processInstanceId } = session.context.processInstance
  const body = { ...HR, processId, processInstanceId, skipToForm: true, ...(taskId ? { taskId } : {}) }
  return client.call<Session>('openContext', 'POST', '/context', { user: user.userId, body })
}

export interface CompleteOptions {
  actionType?: 'complete' | 'cancel' | 'return' | 'function'
  dataInstance?: Record<string, unknown>
  taskId?: string
  additionalInfo?: Record<string, unknown>
}

/**
 * `POST /action/complete` on the session's task (or `taskId`), with the session's data unless given. `Body` is what
 * the answer carries: the session from the engine, the session in an envelope from the gateway.
 */
export async function completeTask<Body = Session>(
  client: WorkflowClient,
  user: Pick<StoredUser, 'userId'>,
  session: Session,
  options: CompleteOptions = {},
): Promise<Answer<Body>> {
  return client.call<Body>('completeAction', 'POST', '/action/complete', {
    user: user.userId,
    body: {
      ...HR,
      ...taskIds(session, options.taskId),
      actionType: options.actionType ?? 'complete',
      dataInstance: options.dataInstance ?? session.context.dataInstance,
      ...(options.additionalInfo ? { additionalInfo: options.additionalInfo } : {}),
    },
  })
}
